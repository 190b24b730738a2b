// FrontendHandler.java: opens the upstream connection for each accepted client, then hands both to RelayHandler.
package bakeoff.proxy;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

final class FrontendHandler extends ChannelInboundHandlerAdapter {
    private final InetSocketAddress upstream;
    private final Class<? extends SocketChannel> channelClass;
    // Even with autoRead off, the epoll transport reads once when the peer's FIN (EPOLLRDHUP)
    // arrives, so a client that sends its request and shuts down its side before the upstream is
    // connected delivers both here. They are kept and replayed to the relay once connected.
    private final List<Object> early = new ArrayList<>(1);
    private boolean inputShutdown;

    FrontendHandler(InetSocketAddress upstream, Class<? extends SocketChannel> channelClass) {
        this.upstream = upstream;
        this.channelClass = channelClass;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        Channel client = ctx.channel();
        // The upstream connection lives on the client's event loop: both sockets are handled by
        // one thread, without hand-offs or locks.
        ChannelFuture connect = new Bootstrap()
                .group(client.eventLoop())
                .channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .handler(new RelayHandler(client))
                .connect(upstream);
        Channel server = connect.channel();
        connect.addListener(f -> {
            if (!f.isSuccess() || !client.isActive()) {
                releaseEarly();
                server.close();
                client.close();
                return;
            }
            // From now on the client side relays too.
            ChannelPipeline pipeline = ctx.pipeline();
            pipeline.replace(this, "relay", new RelayHandler(server));
            for (Object msg : early) {
                pipeline.fireChannelRead(msg);
            }
            early.clear();
            if (inputShutdown) {
                pipeline.fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            } else {
                client.read();
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        early.add(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof ChannelInputShutdownEvent) {
            inputShutdown = true;
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // Gone before the upstream answered: the connect listener closes the upstream side.
        releaseEarly();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private void releaseEarly() {
        for (Object msg : early) {
            ReferenceCountUtil.release(msg);
        }
        early.clear();
    }
}
