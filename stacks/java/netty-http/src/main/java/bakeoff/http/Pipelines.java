// Pipelines.java: each connection's pipeline for the PROTOCOL the lab sets: HTTP/1.1, TLS with ALPN, or h2c.
package bakeoff.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.util.AsciiString;
import java.io.File;
import javax.net.ssl.SSLException;

/** Every protocol ends in the same {@link Routes} handler behind an HttpObjectAggregator: HTTP/1.1
 *  directly, HTTP/2 on one child channel per stream that turns frames into HTTP/1-style objects. */
final class Pipelines extends ChannelInitializer<SocketChannel> {
    /** Requests carry no bodies here; the aggregator's limit only bounds a client that sends one. */
    private static final int MAX_CONTENT = 1 << 20;
    /** Go's net/http default: streams one connection may have open at once. */
    private static final int MAX_CONCURRENT_STREAMS = 250;
    private static final String H1_AGGREGATOR = "h1-aggregator";
    private static final String H1_ROUTES = "h1-routes";

    private final String protocol;
    private final Routes routes;
    private final SslContext tls;

    Pipelines(String protocol, Routes routes) throws SSLException {
        this.protocol = protocol;
        this.routes = routes;
        switch (protocol) {
            case "h1", "h2c" -> tls = null;
            // One TLS server for both: the client's ALPN picks h2 or http/1.1.
            case "h1-tls", "h2" -> tls = tlsContext();
            default -> throw new IllegalArgumentException("PROTOCOL must be h1, h1-tls, h2 or h2c, not " + protocol);
        }
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ChannelPipeline p = ch.pipeline();
        switch (protocol) {
            case "h1" -> http1(p);
            case "h2c" -> cleartextHttp2(p);
            default -> {
                p.addLast(tls.newHandler(ch.alloc()));
                p.addLast(new ApplicationProtocolNegotiationHandler(ApplicationProtocolNames.HTTP_1_1) {
                    @Override
                    protected void configurePipeline(ChannelHandlerContext ctx, String chosen) {
                        if (ApplicationProtocolNames.HTTP_2.equals(chosen)) {
                            http2(ctx.pipeline());
                        } else if (ApplicationProtocolNames.HTTP_1_1.equals(chosen)) {
                            http1(ctx.pipeline());
                        } else {
                            throw new IllegalStateException("unexpected ALPN protocol " + chosen);
                        }
                    }
                });
            }
        }
    }

    private void http1(ChannelPipeline p) {
        p.addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_CONTENT), routes);
    }

    private void http2(ChannelPipeline p) {
        p.addLast(frameCodec(), multiplex());
    }

    /** h2c: a connection that opens with the HTTP/2 preface (prior knowledge) gets the HTTP/2
     *  pipeline; any other is served as HTTP/1.1, which may also ask to upgrade (Upgrade: h2c). */
    private void cleartextHttp2(ChannelPipeline p) {
        HttpServerCodec codec = new HttpServerCodec();
        HttpServerUpgradeHandler upgrade = new HttpServerUpgradeHandler(codec, name ->
                AsciiString.contentEquals(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, name)
                        ? new Http2ServerUpgradeCodec(frameCodec(), multiplex())
                        : null);
        // The prior-knowledge handler is one handler: it installs the codec and the multiplexer in
        // its own place and drops the HTTP/1.1 tail, which an HTTP/2 connection never uses.
        ChannelHandler priorKnowledge = new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ChannelPipeline pipeline = ch.pipeline();
                Http2FrameCodec codec = frameCodec();
                // The multiplexer finds its codec when added, so the codec goes in first.
                pipeline.addAfter(pipeline.context(this).name(), null, codec);
                pipeline.addAfter(pipeline.context(codec).name(), null, multiplex());
                pipeline.remove(H1_AGGREGATOR);
                pipeline.remove(H1_ROUTES);
            }
        };
        p.addLast(new CleartextHttp2ServerUpgradeHandler(codec, upgrade, priorKnowledge));
        p.addLast(H1_AGGREGATOR, new HttpObjectAggregator(MAX_CONTENT));
        p.addLast(H1_ROUTES, routes);
    }

    private static Http2FrameCodec frameCodec() {
        return Http2FrameCodecBuilder.forServer()
                .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(MAX_CONCURRENT_STREAMS))
                .build();
    }

    /** One child channel per stream, each on the connection's event loop, with the HTTP/1.1 handlers. */
    private Http2MultiplexHandler multiplex() {
        return new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel ch) {
                ch.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true),
                        new HttpObjectAggregator(MAX_CONTENT), routes);
            }
        });
    }

    /** The run's certificate and PKCS#8 key (TLS_CERT, TLS_KEY) on the JDK's TLS, offering h2 and
     *  http/1.1 by ALPN; HTTP/2's cipher list (RFC 7540's allowed suites, TLS 1.3's among them). */
    private static SslContext tlsContext() throws SSLException {
        return SslContextBuilder.forServer(new File(System.getenv("TLS_CERT")), new File(System.getenv("TLS_KEY")))
                .sslProvider(SslProvider.JDK)
                .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .applicationProtocolConfig(new ApplicationProtocolConfig(
                        ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2,
                        ApplicationProtocolNames.HTTP_1_1))
                .build();
    }
}
