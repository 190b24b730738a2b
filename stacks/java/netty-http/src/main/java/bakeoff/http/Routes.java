// Routes.java: the request handler every protocol ends in: routes a whole request and writes its answer.
package bakeoff.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Stateless, so one instance serves every HTTP/1.1 connection and every HTTP/2 stream. */
@ChannelHandler.Sharable
final class Routes extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final AsciiString TEXT = AsciiString.cached("text/plain; charset=utf-8");
    private static final AsciiString JSON = AsciiString.cached("application/json");
    private static final byte[] HELLO = "Hello World!".getBytes(StandardCharsets.US_ASCII);

    private final List<Records.Record> records;
    private final Products products;

    Routes(List<Records.Record> records, Products products) {
        this.records = records;
        this.products = products;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            // A request the codec could not parse: the connection's framing is lost, so close it.
            ctx.writeAndFlush(text(ctx, HttpResponseStatus.BAD_REQUEST, "malformed request"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        FullHttpResponse res;
        try {
            res = route(ctx, req.method(), new QueryStringDecoder(req.uri()));
        } catch (Exception e) {
            res = text(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, e.toString());
        }
        send(ctx, req, res);
    }

    private FullHttpResponse route(ChannelHandlerContext ctx, HttpMethod method, QueryStringDecoder uri)
            throws Exception {
        String path = uri.path();
        switch (path) {
            case "/", "/json", "/products" -> {
                if (!HttpMethod.GET.equals(method)) {
                    FullHttpResponse res = text(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed");
                    res.headers().set(HttpHeaderNames.ALLOW, HttpMethod.GET.asciiName());
                    return res;
                }
            }
            default -> {
                return text(ctx, HttpResponseStatus.NOT_FOUND, "not found");
            }
        }
        return switch (path) {
            case "/" -> response(ctx, HttpResponseStatus.OK, TEXT, ctx.alloc().buffer(HELLO.length).writeBytes(HELLO));
            case "/json" -> json(ctx, uri);
            default -> products(ctx);
        };
    }

    /** The length of the first n records encoded as one canonical JSON array, encoded now. */
    private FullHttpResponse json(ChannelHandlerContext ctx, QueryStringDecoder uri) throws IOException {
        int n = intParam(uri, "n", 1000, 1, records.size());
        if (n < 0) {
            return text(ctx, HttpResponseStatus.BAD_REQUEST, "n must be an integer in 1..=" + records.size());
        }
        byte[] encoded = Json.MAPPER.writeValueAsBytes(records.subList(0, n));
        return text(ctx, HttpResponseStatus.OK, Integer.toString(encoded.length));
    }

    private FullHttpResponse products(ChannelHandlerContext ctx) throws Exception {
        if (products == null) {
            return text(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR, "DATABASE_URL not set");
        }
        List<Products.Product> rows = products.all();
        ByteBuf body = ctx.alloc().buffer(4096);
        try (ByteBufOutputStream out = new ByteBufOutputStream(body)) {
            // ByteBufOutputStream is a DataOutput too; Jackson's OutputStream writer is the one meant.
            Json.MAPPER.writeValue((OutputStream) out, rows);
        } catch (IOException | RuntimeException e) {
            body.release();
            throw e;
        }
        return response(ctx, HttpResponseStatus.OK, JSON, body);
    }

    /** The query parameter as an int in lo..=hi, the fallback when absent, -1 when invalid. */
    private static int intParam(QueryStringDecoder uri, String name, int fallback, int lo, int hi) {
        List<String> values = uri.parameters().get(name);
        if (values == null || values.isEmpty()) {
            return fallback;
        }
        try {
            int v = Integer.parseInt(values.get(0));
            return v >= lo && v <= hi ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static FullHttpResponse text(ChannelHandlerContext ctx, HttpResponseStatus status, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return response(ctx, status, TEXT, ctx.alloc().buffer(bytes.length).writeBytes(bytes));
    }

    private static FullHttpResponse response(ChannelHandlerContext ctx, HttpResponseStatus status,
                                             AsciiString contentType, ByteBuf body) {
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return res;
    }

    /** HTTP/1.1 keeps the connection unless the client said close; an HTTP/1.0 client that asked for
     *  keep-alive is told it got it. An HTTP/2 stream arrives as HTTP/1.1 without Connection, so it
     *  is never closed here (its stream ends with the response). */
    private static void send(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse res) {
        if (!HttpUtil.isKeepAlive(req)) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (req.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        ctx.writeAndFlush(res);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reset by the peer is routine under load; anything else is worth a line in server.log.
        if (!(cause instanceof IOException)) {
            System.err.println("java/netty-http: " + cause);
        }
        ctx.close();
    }
}
