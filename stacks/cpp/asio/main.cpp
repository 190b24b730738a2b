// main.cpp: the cpp/asio TCP proxy: WORKERS io_contexts (one thread each) relaying with callback handlers.
#include <asio.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using asio::ip::tcp;

namespace {

// 16 KiB per direction: a whole 10 KiB answer is read and written with one call each.
constexpr std::size_t kBufferSize = 16 * 1024;

// One client connection and its upstream connection. Both live on one io_context, run by one
// thread, so no strand or lock is needed. Each pending operation holds a shared_ptr to the
// session; when the last one finishes the session is destroyed and both sockets close.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket client, asio::io_context& ctx)
        : client_(std::move(client)), server_(ctx) {}

    void start(const tcp::endpoint& upstream) {
        server_.async_connect(upstream, [self = shared_from_this()](const asio::error_code& ec) {
            if (ec) {
                self->close();
                return;
            }
            asio::error_code ignored;
            // Small HTTP messages must not wait for Nagle's algorithm.
            self->client_.set_option(tcp::no_delay(true), ignored);
            self->server_.set_option(tcp::no_delay(true), ignored);
            self->pump(self->client_, self->server_, self->up_);
            self->pump(self->server_, self->client_, self->down_);
        });
    }

private:
    using Buffer = std::array<char, kBufferSize>;

    // Read what `from` has, write all of it to `to`, repeat. EOF is passed on as a half-close
    // (FIN) so the other direction can still finish; any error closes both sockets, which makes
    // the other direction's pending operation fail with operation_aborted and end too.
    void pump(tcp::socket& from, tcp::socket& to, Buffer& buf) {
        from.async_read_some(asio::buffer(buf),
            [self = shared_from_this(), &from, &to, &buf](const asio::error_code& ec, std::size_t n) {
                if (ec == asio::error::eof) {
                    asio::error_code ignored;
                    to.shutdown(tcp::socket::shutdown_send, ignored);
                    return;
                }
                if (ec) {
                    self->close();
                    return;
                }
                asio::async_write(to, asio::buffer(buf.data(), n),
                    [self, &from, &to, &buf](const asio::error_code& ec, std::size_t) {
                        if (ec) {
                            self->close();
                            return;
                        }
                        self->pump(from, to, buf);
                    });
            });
    }

    void close() {
        asio::error_code ignored;
        client_.close(ignored);
        server_.close(ignored);
    }

    tcp::socket client_;
    tcp::socket server_;
    Buffer up_;    // client -> upstream
    Buffer down_;  // upstream -> client
};

// One listening socket per io_context, all bound to the same port with SO_REUSEPORT: the kernel
// spreads new connections over the threads and a connection never changes thread.
class Listener {
public:
    Listener(asio::io_context& ctx, const tcp::endpoint& listen, tcp::endpoint upstream)
        : ctx_(ctx), acceptor_(ctx), retry_(ctx), upstream_(upstream) {
        acceptor_.open(listen.protocol());
        acceptor_.set_option(tcp::acceptor::reuse_address(true));
        int one = 1;
        if (::setsockopt(acceptor_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
            std::perror("SO_REUSEPORT");
            std::exit(1);
        }
        acceptor_.bind(listen);
        acceptor_.listen(4096);
        accept();
    }

private:
    void accept() {
        acceptor_.async_accept(ctx_, [this](const asio::error_code& ec, tcp::socket client) {
            if (ec) {
                // EMFILE and friends are temporary: back off instead of spinning or exiting.
                std::fprintf(stderr, "accept: %s\n", ec.message().c_str());
                retry_.expires_after(std::chrono::milliseconds(5));
                retry_.async_wait([this](const asio::error_code&) { accept(); });
                return;
            }
            std::make_shared<Session>(std::move(client), ctx_)->start(upstream_);
            accept();
        });
    }

    asio::io_context& ctx_;
    tcp::acceptor acceptor_;
    asio::steady_timer retry_;
    tcp::endpoint upstream_;
};

tcp::endpoint parse_endpoint(const std::string& hostport) {
    auto colon = hostport.rfind(':');
    if (colon == std::string::npos) {
        std::fprintf(stderr, "bad address %s (want host:port)\n", hostport.c_str());
        std::exit(1);
    }
    return {asio::ip::make_address(hostport.substr(0, colon)),
            static_cast<unsigned short>(std::stoi(hostport.substr(colon + 1)))};
}

}  // namespace

int main() {
    const char* port = std::getenv("PORT");
    const char* upstream = std::getenv("UPSTREAM");
    if (!port || !upstream) {
        std::fprintf(stderr, "PORT and UPSTREAM must be set\n");
        return 1;
    }
    const char* w = std::getenv("WORKERS");
    int workers = w ? std::atoi(w) : 0;
    if (workers <= 0) workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

    // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
    // parse_endpoint splits at the last ':', so an IPv6 address needs no brackets.
    const char* host = std::getenv("HOST");
    if (!host || !*host) host = "127.0.0.1";
    const tcp::endpoint listen = parse_endpoint(std::string(host) + ":" + port);
    const tcp::endpoint up = parse_endpoint(upstream);

    // io_context per thread (concurrency hint 1: no internal locking needed).
    std::vector<std::unique_ptr<asio::io_context>> contexts;
    std::vector<std::unique_ptr<Listener>> listeners;
    for (int i = 0; i < workers; ++i) {
        contexts.push_back(std::make_unique<asio::io_context>(1));
        listeners.push_back(std::make_unique<Listener>(*contexts.back(), listen, up));
    }
    std::vector<std::thread> threads;
    for (int i = 1; i < workers; ++i) threads.emplace_back([&ctx = *contexts[i]] { ctx.run(); });
    contexts[0]->run();
    for (auto& t : threads) t.join();
}
