// Main.java: the java/netty TCP proxy's entry point: event loop groups, transport choice and the listening socket.
package bakeoff.proxy;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;

public final class Main {
    public static void main(String[] args) throws InterruptedException {
        // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
        String h = System.getenv("HOST");
        String host = h == null || h.isEmpty() ? "127.0.0.1" : h;
        int port = Integer.parseInt(System.getenv("PORT"));
        String upstream = System.getenv("UPSTREAM");
        int colon = upstream.lastIndexOf(':');
        InetSocketAddress upstreamAddress = new InetSocketAddress(
                upstream.substring(0, colon), Integer.parseInt(upstream.substring(colon + 1)));
        String w = System.getenv("WORKERS");
        int workers = w == null || w.isBlank() ? Runtime.getRuntime().availableProcessors() : Integer.parseInt(w);

        // Netty's native epoll transport on Linux (what Netty servers use in production); NIO elsewhere.
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup boss = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        EventLoopGroup loops = epoll ? new EpollEventLoopGroup(workers) : new NioEventLoopGroup(workers);
        Class<? extends ServerChannel> serverClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Class<? extends SocketChannel> clientClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        try {
            Channel server = new ServerBootstrap()
                    .group(boss, loops)
                    .channel(serverClass)
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    // Reads happen only when the previous chunk was written (backpressure).
                    .childOption(ChannelOption.AUTO_READ, false)
                    // A FIN is an event, not a close: it is passed on as a half-close.
                    .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new FrontendHandler(upstreamAddress, clientClass));
                        }
                    })
                    .bind(new InetSocketAddress(host, port)).sync().channel();
            System.err.println("netty proxy on " + host + ":" + port + " -> " + upstream + ", "
                    + workers + " event loops, " + (epoll ? "epoll" : "nio"));
            server.closeFuture().sync();
        } finally {
            boss.shutdownGracefully();
            loops.shutdownGracefully();
        }
    }
}
