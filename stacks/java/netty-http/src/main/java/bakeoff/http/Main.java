// Main.java: the java/netty-http server's entry point: environment, event loop groups, transport and the listening socket.
package bakeoff.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.nio.file.Path;

public final class Main {
    public static void main(String[] args) throws Exception {
        // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
        String host = env("HOST", "127.0.0.1");
        int port = Integer.parseInt(System.getenv("PORT"));
        int workers = Integer.parseInt(env("WORKERS", Integer.toString(Runtime.getRuntime().availableProcessors())));
        String protocol = env("PROTOCOL", "h1");

        Routes routes = new Routes(
                Records.load(Path.of(System.getenv("DATA_DIR"), "records.json")),
                Products.open(System.getenv("DATABASE_URL")));
        Pipelines pipelines = new Pipelines(protocol, routes);

        // Netty's native epoll transport on Linux (what Netty servers use in production); NIO elsewhere.
        // WORKERS loops run every handler, the products query included; the boss loop only accepts.
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup boss = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        EventLoopGroup loops = epoll ? new EpollEventLoopGroup(workers) : new NioEventLoopGroup(workers);
        Class<? extends ServerChannel> serverClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        try {
            Channel server = new ServerBootstrap()
                    .group(boss, loops)
                    .channel(serverClass)
                    // tokio's backlog: a burst of new connections is queued, not dropped and retried.
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(pipelines)
                    .bind(new InetSocketAddress(host, port)).sync().channel();
            System.err.println("java/netty-http listening on " + host + ":" + port + " (" + protocol + "), "
                    + workers + " event loops, " + (epoll ? "epoll" : "nio"));
            server.closeFuture().sync();
        } finally {
            boss.shutdownGracefully();
            loops.shutdownGracefully();
        }
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
