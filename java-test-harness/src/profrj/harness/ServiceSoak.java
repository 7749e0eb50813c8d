package profrj.harness;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A service's mix for a soak (scripts/memory-soak): T worker threads (argument 1) handle requests
 * for S seconds (argument 2), then it prints "requests=N" and "rss-kb=N" (the process's resident
 * memory at the end, from /proc/self/status). A request does what real code does: parses a
 * header into a HashMap of strings and boxed numbers, builds a response with a StringBuilder,
 * makes a few objects of this program's own classes (an order and its lines), sorts a small
 * list, hashes, and keeps its result in a shared cache of the last 20,000 (under a lock, so
 * threads contend now and then); the rest is garbage at once. Most of what it allocates is the
 * JDK's: strings, boxes, map nodes and tables, arrays.
 */
public class ServiceSoak {
    static final class Order {
        final long id;
        final List<Line> lines = new ArrayList<>();

        Order(long id) {
            this.id = id;
        }
    }

    static final class Line {
        final String item;
        final int quantity;
        final long cents;

        Line(String item, int quantity, long cents) {
            this.item = item;
            this.quantity = quantity;
            this.cents = cents;
        }
    }

    static final int CACHE = 20_000;
    static final Map<Long, String> cache =
            new LinkedHashMap<Long, String>(CACHE * 2, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, String> e) {
                    return size() > CACHE;
                }
            };

    static long handle(SplittableRandom random, long id) {
        Map<String, Object> header = new HashMap<>();
        for (int i = 0; i < 12; i++) {
            header.put("key-" + i, i % 3 == 0 ? Integer.valueOf(random.nextInt(1000)) : "v" + i);
        }
        Order order = new Order(id);
        int lines = 1 + random.nextInt(6);
        for (int i = 0; i < lines; i++) {
            order.lines.add(new Line("item-" + random.nextInt(500), 1 + random.nextInt(5),
                    random.nextInt(10_000)));
        }
        order.lines.sort((a, b) -> Long.compare(a.cents, b.cents));
        StringBuilder response = new StringBuilder(256);
        long total = 0;
        for (Line l : order.lines) {
            total += l.cents * l.quantity;
            response.append(l.item).append(':').append(l.quantity).append(';');
        }
        response.append(header.get("key-3")).append('#').append(total);
        String body = response.toString();
        long h = 0;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < body.length(); i++) {
                h = h * 31 + body.charAt(i);
            }
        }
        synchronized (cache) {
            cache.put(id, body);
        }
        return h;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long seconds = Long.parseLong(args[1]);
        LongAdder requests = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int me = t;
            Thread w = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(me);
                long id = (long) me << 40;
                long sink = 0;
                while (!stop.get()) {
                    sink += handle(random, id++);
                    requests.increment();
                }
                if (sink == 42) {
                    System.out.println();
                }
            }, "worker-" + t);
            workers.add(w);
            w.start();
        }
        Thread.sleep(seconds * 1000);
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        System.out.println("requests=" + requests.sum());
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                System.out.println("rss-kb=" + line.replaceAll("[^0-9]", ""));
            }
        }
    }
}
