// docstore command line: `serve PORT`, `seed URL FILE`, `set URL ID FIELD VALUE`, `get URL ID`,
// `finds URL`, `bench URL CONNECTIONS SECONDS`.
package bakeoff.docstore;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import org.bson.Document;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

public final class Main {
    static final String DEFAULT_DATABASE = "bakeoff";
    static final String COLLECTION = "documents";

    /**
     * The version the server reports. mongo-java-server's newest built-in one says wire version 8
     * (MongoDB 4.2), which current drivers refuse (pymongo 4.20 needs 9). MongoDB 4.4 / wire 9 is the
     * lowest they accept; it promises no command that the memory backend lacks for this use.
     */
    static final MongoVersion REPORTED_VERSION = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(4, 4, 0);
        }

        @Override
        public int getWireVersion() {
            return 9;
        }
    };

    private Main() {}

    public static void main(String[] args) throws Exception {
        // Before any logger exists: library chatter stays at warnings, on stderr.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        String command = args.length > 0 ? args[0] : "";
        switch (command) {
            case "serve":
                if (args.length != 2 && args.length != 3) return usage();
                return serve(Integer.parseInt(args[1]), args.length == 3 ? args[2] : "127.0.0.1");
            case "seed":
                if (args.length != 3) return usage();
                return seed(args[1], Path.of(args[2]));
            case "set":
                if (args.length != 5) return usage();
                return set(args[1], Integer.parseInt(args[2]), args[3], args[4]);
            case "get":
                if (args.length != 3) return usage();
                return get(args[1], Integer.parseInt(args[2]));
            case "finds":
                if (args.length != 2) return usage();
                return finds(args[1]);
            case "bench":
                if (args.length != 4) return usage();
                return bench(args[1], Integer.parseInt(args[2]), Double.parseDouble(args[3]));
            default:
                return usage();
        }
    }

    static int usage() {
        System.err.println("usage: docstore serve PORT [HOST] | seed URL FILE | set URL ID FIELD VALUE | get URL ID | finds URL | bench URL CONNECTIONS SECONDS");
        return 2;
    }

    /** Serves the in-memory store on HOST:PORT (127.0.0.1 by default) until SIGTERM, or until a piped stdin closes. */
    static int serve(int port, String host) throws Exception {
        MongoServer server = new MongoServer(new CountingBackend().version(REPORTED_VERSION));
        server.bind(host, port);
        CountDownLatch stop = new CountDownLatch(1);
        // SIGTERM/SIGINT run shutdown hooks: close the listener before the JVM exits.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            stop.countDown();
        }));
        System.out.println("ready");
        System.out.flush();
        // Only a pipe counts as "the parent's handle": stdin from /dev/null or a file is at EOF at once
        // and must not stop the server.
        if (stdinIsPipe()) {
            Thread watcher = new Thread(() -> {
                drain(System.in);
                stop.countDown();
            }, "stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }
        stop.await();
        return 0;
    }

    static boolean stdinIsPipe() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/0")).toString().startsWith("pipe:");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    static void drain(InputStream in) {
        byte[] buffer = new byte[4096];
        try {
            while (in.read(buffer) >= 0) {
                // discard: only the end of the stream matters
            }
        } catch (IOException e) {
            // a broken stdin means the parent is gone: stop as on EOF
        }
    }

    /** Drops the database and fills the collection from a JSON array of documents with integer `_id`s. */
    static int seed(String url, Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        // org.bson parses one document, not an array: wrap the array in a field.
        List<Document> documents = Document.parse("{\"documents\": " + text + "}")
                .getList("documents", Document.class);
        try (MongoClient client = MongoClients.create(url)) {
            MongoDatabase database = database(client, url);
            database.drop();
            database.getCollection(COLLECTION).insertMany(documents);
            long count = database.getCollection(COLLECTION).countDocuments();
            System.out.println("seeded " + count + " documents");
            return count == documents.size() ? 0 : 1;
        }
    }

    /** Sets one string field of one document; exit 1 when no document has that `_id`. */
    static int set(String url, int id, String field, String value) {
        try (MongoClient client = MongoClients.create(url)) {
            long matched = collection(client, url)
                    .updateOne(Filters.eq("_id", id), Updates.set(field, value))
                    .getMatchedCount();
            if (matched != 1) {
                System.err.println("no document with _id " + id);
                return 1;
            }
            return 0;
        }
    }

    /** Prints one document as relaxed extended JSON (plain numbers); exit 1 when it is missing. */
    static int get(String url, int id) {
        try (MongoClient client = MongoClients.create(url)) {
            Document document = collection(client, url).find(Filters.eq("_id", id)).first();
            if (document == null) {
                System.err.println("no document with _id " + id);
                return 1;
            }
            System.out.println(document.toJson());
            return 0;
        }
    }

    /**
     * Prints how many find commands the server has served (serverStatus.opcounters.query, which
     * a real mongod reports too); exit 1 when the server does not report it.
     */
    static int finds(String url) {
        try (MongoClient client = MongoClients.create(url)) {
            Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            Object counters = status.get("opcounters");
            if (!(counters instanceof Document) || !(((Document) counters).get("query") instanceof Number)) {
                System.err.println("serverStatus has no opcounters.query");
                return 1;
            }
            System.out.println(((Number) ((Document) counters).get("query")).longValue());
            return 0;
        }
    }

    /** Documents the bench reads by `_id`: the fixture's 100. */
    static final int BENCH_IDS = 100;
    /** Unmeasured lookups per thread before the clock starts (opens the pool's connections). */
    static final int BENCH_WARMUP = 20;

    /**
     * The store ceiling: CONNECTIONS threads sharing one client whose pool holds CONNECTIONS
     * connections, each doing `find({_id: random 0..99}).first()` back to back for SECONDS. Prints one
     * JSON line {"queries":..,"seconds":..,"mean_us":..,"p99_us":..}; exit 1 when a lookup misses.
     */
    static int bench(String url, int connections, double seconds) throws Exception {
        if (connections < 1 || !(seconds > 0)) return usage();
        ConnectionString cs = new ConnectionString(url);
        com.mongodb.MongoClientSettings settings = com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(cs)
                .applyToConnectionPoolSettings(p -> p.maxSize(connections).minSize(connections))
                .build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoCollection<Document> documents = collection(client, url);
            long[] deadline = new long[1];
            long nanos = (long) (seconds * 1e9);
            // The barrier's action runs once every thread has warmed up, before any is released
            // (happens-before), so the clock starts when the last thread is ready.
            CyclicBarrier start = new CyclicBarrier(connections + 1, () -> deadline[0] = System.nanoTime() + nanos);
            long[][] latencies = new long[connections][];
            int[] counts = new int[connections];
            boolean[] missed = new boolean[1];
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < connections; t++) {
                final int me = t;
                Thread thread = new Thread(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    long[] lat = new long[1 << 14];
                    int n = 0;
                    try {
                        for (int i = 0; i < BENCH_WARMUP; i++) {
                            documents.find(Filters.eq("_id", rnd.nextInt(BENCH_IDS))).first();
                        }
                        start.await();
                        long end = deadline[0];
                        while (true) {
                            long t0 = System.nanoTime();
                            if (t0 >= end) break;
                            Document d = documents.find(Filters.eq("_id", rnd.nextInt(BENCH_IDS))).first();
                            long t1 = System.nanoTime();
                            if (d == null) missed[0] = true;
                            if (n == lat.length) lat = Arrays.copyOf(lat, n * 2);
                            lat[n++] = t1 - t0;
                        }
                    } catch (Exception e) {
                        System.err.println("bench thread failed: " + e);
                        missed[0] = true;
                    }
                    latencies[me] = lat;
                    counts[me] = n;
                }, "bench-" + t);
                threads.add(thread);
                thread.start();
            }
            start.await(120, TimeUnit.SECONDS);
            long begin = deadline[0] - nanos;
            for (Thread thread : threads) thread.join();
            double elapsed = (System.nanoTime() - begin) / 1e9;
            int total = 0;
            for (int c : counts) total += c;
            long[] all = new long[total];
            int at = 0;
            double sum = 0;
            for (int t = 0; t < connections; t++) {
                System.arraycopy(latencies[t], 0, all, at, counts[t]);
                at += counts[t];
                for (int i = 0; i < counts[t]; i++) sum += latencies[t][i];
            }
            Arrays.sort(all);
            double mean = total == 0 ? 0 : sum / total / 1e3;
            double p99 = total == 0 ? 0 : all[Math.min(total - 1, (int) Math.ceil(0.99 * total) - 1)] / 1e3;
            System.out.println("{\"queries\":" + total + ",\"seconds\":" + elapsed + ",\"mean_us\":" + mean + ",\"p99_us\":" + p99 + "}");
            return missed[0] ? 1 : 0;
        }
    }

    static MongoDatabase database(MongoClient client, String url) {
        String name = new ConnectionString(url).getDatabase();
        return client.getDatabase(name == null || name.isEmpty() ? DEFAULT_DATABASE : name);
    }

    static MongoCollection<Document> collection(MongoClient client, String url) {
        return database(client, url).getCollection(COLLECTION);
    }
}
