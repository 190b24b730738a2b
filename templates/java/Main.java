// The {{stack}} stack: the JDK's com.sun.net.httpserver on $HOST:$PORT with a pool of WORKERS
// threads, answering the hello scenario. Replace it with the framework you want to measure
// (Netty, Helidon, Spring Boot...).

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

public final class Main {
    private static final byte[] HELLO = "Hello World!".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOT_FOUND = "not found".getBytes(StandardCharsets.US_ASCII);

    private static void answer(HttpExchange exchange) throws IOException {
        boolean hello = "GET".equals(exchange.getRequestMethod()) && "/".equals(exchange.getRequestURI().getPath());
        byte[] body = hello ? HELLO : NOT_FOUND;
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        exchange.sendResponseHeaders(hello ? 200 : 404, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    public static void main(String[] args) throws IOException {
        // HOST is the address to bind: 127.0.0.1, or the server host's own address when the lab places
        // the server on a host of its own. Never 0.0.0.0: a benchmark never opens a port to the network.
        String host = System.getenv().getOrDefault("HOST", "");
        if (host.isEmpty()) {
            host = "127.0.0.1";
        }
        int port = Integer.parseInt(System.getenv("PORT"));
        int workers = Math.max(1, Integer.parseInt(System.getenv().getOrDefault("WORKERS", "1")));
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 1024);
        server.createContext("/", Main::answer);
        server.setExecutor(Executors.newFixedThreadPool(workers));
        server.start();
        System.out.println("{{stack}} listening on " + host + ":" + port + " with " + workers + " threads");
    }
}
