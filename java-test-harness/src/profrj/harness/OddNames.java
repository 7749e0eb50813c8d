package profrj.harness;

/**
 * Threads whose names XML 1.0 cannot hold as they are: "odd\u0001one" (a
 * control character) and "\u001b[31mred\u001b[0m" (an ANSI colour escape
 * that would reach a terminal), each burning ~200 ms of CPU so the sampler
 * sees them. The snapshot must stay well-formed and keep both names.
 */
public class OddNames {
    public static void main(String[] args) throws Exception {
        String[] names = {"odd\u0001one", "\u001b[31mred\u001b[0m", "back\\slash"};
        Thread[] ts = new Thread[names.length];
        for (int i = 0; i < names.length; i++) {
            ts[i] = new Thread(() -> {
                long end = System.nanoTime() + 200_000_000L;
                long x = 1;
                while (System.nanoTime() < end) {
                    x = BusyThreads.spin(x);
                }
                BusyThreads.sink += x;
            }, names[i]);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
    }
}
