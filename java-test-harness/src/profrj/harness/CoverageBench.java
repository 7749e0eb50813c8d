package profrj.harness;

/**
 * Line-heavy benchmark for the coverage mode (scripts/coverage-bench): hand-written algorithms,
 * so the hot lines are the program's own (in the default scope), not the JDK's. Arguments:
 * rounds. Prints "bench-ms=N" for the timed rounds (after a warm-up of the same size).
 */
public class CoverageBench {
    static volatile long sink;

    static void quicksort(int[] a, int lo, int hi) {
        while (lo < hi) {
            int p = a[(lo + hi) >>> 1];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < p) {
                    i++;
                }
                while (a[j] > p) {
                    j--;
                }
                if (i <= j) {
                    int t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                    i++;
                    j--;
                }
            }
            if (j - lo < hi - i) {
                quicksort(a, lo, j);
                lo = i;
            } else {
                quicksort(a, i, hi);
                hi = j;
            }
        }
    }

    static int sieve(int n) {
        boolean[] composite = new boolean[n + 1];
        int primes = 0;
        for (int i = 2; i <= n; i++) {
            if (composite[i]) {
                continue;
            }
            primes++;
            for (long k = (long) i * i; k <= n; k += i) {
                composite[(int) k] = true;
            }
        }
        return primes;
    }

    static long matmul(int n, int seed) {
        long[][] a = new long[n][n];
        long[][] b = new long[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                a[i][j] = (i * 31 + j * seed) % 17;
                b[i][j] = (j * 7 + i + seed) % 13;
            }
        }
        long trace = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                long s = 0;
                for (int k = 0; k < n; k++) {
                    s += a[i][k] * b[k][j];
                }
                if (i == j) {
                    trace += s;
                }
            }
        }
        return trace;
    }

    static int wordHash(String text) {
        int h = 0;
        int words = 0;
        boolean inWord = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isLetter(c)) {
                h = h * 31 + c;
                inWord = true;
            } else if (inWord) {
                words++;
                inWord = false;
            }
        }
        return h ^ words;
    }

    static void round(int seed) {
        int[] data = new int[20_000];
        long x = seed;
        for (int i = 0; i < data.length; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            data[i] = (int) (x >>> 33);
        }
        quicksort(data, 0, data.length - 1);
        sink += data[data.length / 2];
        sink += sieve(200_000);
        sink += matmul(60, seed);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 2_000; i++) {
            sb.append("word").append(i % 97).append(' ');
        }
        sink += wordHash(sb.toString());
    }

    public static void main(String[] args) {
        int rounds = Integer.parseInt(args[0]);
        for (int r = 0; r < rounds; r++) {
            round(r);
        }
        long t = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
            round(r + 1000);
        }
        System.out.println("bench-ms=" + (System.nanoTime() - t) / 1_000_000);
    }
}
