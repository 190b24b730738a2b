// RelayHandler.java: relays one channel's bytes to its peer, one read in flight, passing FINs on as half-closes.
package bakeoff.proxy;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;

// The pattern of Netty's proxy example: autoRead is off, the next read is asked for only when the
// previous chunk has been written to the peer (backpressure); a write failure closes both sides.
// Added to this example: with ALLOW_HALF_CLOSURE an EOF arrives as ChannelInputShutdownEvent and is
// passed on as shutdownOutput (FIN) once the pending writes are flushed; a channel closes once
// both of its directions are done.
final class RelayHandler extends ChannelInboundHandlerAdapter {
    private final Channel peer;

    RelayHandler(Channel peer) {
        this.peer = peer;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // The upstream side: start reading its answer as soon as it is connected.
        ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Channel self = ctx.channel();
        peer.writeAndFlush(msg).addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                self.read();
            } else {
                f.channel().close();
                self.close();
            }
        });
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (!(evt instanceof ChannelInputShutdownEvent)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        Channel self = ctx.channel();
        if (!peer.isActive()) {
            self.close();
            return;
        }
        // Flush what is queued for the peer, then send it our FIN.
        peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) f ->
                ((DuplexChannel) peer).shutdownOutput().addListener((ChannelFutureListener) s -> {
                    if (!s.isSuccess() || ((DuplexChannel) peer).isInputShutdown()) {
                        peer.close();
                    }
                }));
        if (((DuplexChannel) self).isOutputShutdown()) {
            self.close();  // both directions of this channel are done
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        // This side is gone for good: close the peer after what it still has to write.
        if (peer.isActive()) {
            peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Resets and broken pipes from clients that leave mid-response are expected: just close.
        ctx.close();
    }
}
