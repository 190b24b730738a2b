// main.go: the go/iocopy TCP proxy: one goroutine pair per connection relaying bytes with io.Copy.
package main

import (
	"io"
	"log"
	"net"
	"os"
	"time"
)

func main() {
	port := os.Getenv("PORT")
	upstream := os.Getenv("UPSTREAM")
	if port == "" || upstream == "" {
		log.Fatal("PORT and UPSTREAM must be set")
	}
	// HOST: the address to bind (127.0.0.1 unless the lab places the server on a host of its own).
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		log.Fatal(err)
	}
	// The start command sets GOMAXPROCS from WORKERS: the OS threads that run goroutines at once,
	// multiplexed by the runtime over its epoll-based netpoller.
	for {
		c, err := ln.Accept()
		if err != nil {
			// Temporary errors (EMFILE, ECONNABORTED) must not stop the proxy.
			log.Print("accept: ", err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		go serve(c.(*net.TCPConn), upstream)
	}
}

func serve(client *net.TCPConn, upstream string) {
	defer client.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		log.Print("dial upstream: ", err)
		return
	}
	server := u.(*net.TCPConn)
	defer server.Close()

	done := make(chan struct{}, 1)
	go func() {
		pipe(server, client)
		done <- struct{}{}
	}()
	pipe(client, server)
	<-done
}

// pipe copies src to dst until EOF or an error. io.Copy finds (*TCPConn).ReadFrom, which uses
// splice(2) between two TCP sockets on Linux, so the bytes never enter user space.
// A clean EOF is passed on as a half-close (FIN) so the other direction can still finish;
// an error (reset, broken pipe) closes both sockets so the sibling copy stops at once.
func pipe(dst, src *net.TCPConn) {
	_, err := io.Copy(dst, src)
	if err != nil {
		dst.Close()
		src.Close()
		return
	}
	dst.CloseWrite()
	src.CloseRead()
}
