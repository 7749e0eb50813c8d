# What the shell benchmark scripts share (the Python ones use scripts/lib/benchlib.py).
# Source it from a script in scripts/:
#
#   . "$(dirname "$0")/lib/common.sh"
#
# It sets ROOT (the repository) and TARGET (cargo's target directory, CARGO_TARGET_DIR
# honoured), AGENT (libprofrj.so) and PROFRJ (the CLI) there, and defines:
#   jdk_tool NAME      a JDK tool: $JAVA_HOME/bin/NAME, else NAME on PATH; stops if neither
#   build_all          cargo build --release (the agent and the CLI)
#   median             the median of the numbers on stdin, one a line
#   load_average       "load average: 1 5 15", to print beside figures

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
AGENT=$TARGET/release/libprofrj.so
PROFRJ=$TARGET/release/profrj

jdk_tool() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/$1" ]; then
    echo "$JAVA_HOME/bin/$1"
  elif command -v "$1" >/dev/null; then
    command -v "$1"
  else
    echo "$(basename "$0"): $1 not found (install a JDK or set JAVA_HOME)" >&2
    exit 1
  fi
}

build_all() { cargo build --release -q --manifest-path "$ROOT/Cargo.toml"; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

load_average() { echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
