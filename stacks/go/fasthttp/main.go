// Package main owns the go/fasthttp stack: fasthttp server, fasthttprouter routes and every scenario's handler.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/buaazp/fasthttprouter"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/tinylib/msgp/msgp"
	"github.com/valyala/fasthttp"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver
)

// Product is one row of table product.
type Product struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Price       float64 `json:"price"`
	Stock       int64   `json:"stock"`
	CreatedAt   string  `json:"created_at"`
}

const productsSQL = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"

var (
	// fasthttprouter has named parameters but no patterns: the router hands the greeting handler
	// one path segment, and this regexp, compiled once, decides whether it is a name.
	nameRe = regexp.MustCompile(`^[a-z]+$`)

	packed   [][]byte // the 1,000 encoded msgpack records, decoded again on every request
	records  []Record // decoded once, encoded again on every /json request
	transfer []byte   // records.json, served as is
	db       *sql.DB
)

func main() {
	load(os.Getenv("DATA_DIR"))
	if url := os.Getenv("DATABASE_URL"); url != "" {
		db = openDB(url)
	}

	r := fasthttprouter.New()
	// Exact routes only: no redirects for a trailing slash or a differently cased path.
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.GET("/", hello)
	r.GET("/greeting/:name", greeting)
	r.GET("/msgpack", msgpackSum)
	r.GET("/json", jsonLen)
	r.GET("/transfer", transferBody)
	r.GET("/loop", loop)
	r.GET("/products", products)

	server := &fasthttp.Server{Handler: r.Handler, Name: "fasthttp"}
	// HOST: the address to bind (127.0.0.1 unless the lab places the server on a host of its own).
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, os.Getenv("PORT"))
	log.Printf("go/fasthttp listening on %s with GOMAXPROCS=%d", addr, runtime.GOMAXPROCS(0))
	log.Fatal(server.ListenAndServe(addr))
}

func load(dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "records.msgpack"))
	if err != nil {
		log.Fatal(err)
	}
	// The fixture is an array of bin values, each one record encoded on its own.
	n, rest, err := msgp.ReadArrayHeaderBytes(raw)
	if err != nil {
		log.Fatal(err)
	}
	packed = make([][]byte, n)
	records = make([]Record, n)
	for i := range packed {
		if packed[i], rest, err = msgp.ReadBytesBytes(rest, nil); err != nil {
			log.Fatal(err)
		}
		if _, err := records[i].UnmarshalMsg(packed[i]); err != nil {
			log.Fatal(err)
		}
	}
	if transfer, err = os.ReadFile(filepath.Join(dir, "records.json")); err != nil {
		log.Fatal(err)
	}
}

func openDB(url string) *sql.DB {
	var d *sql.DB
	var err error
	if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
		// sqlite:///abs/path -> /abs/path, read-only: the harness's live-data probe writes from outside.
		d, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
	} else if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		d, err = sql.Open("pgx", url)
	} else {
		log.Fatalf("DATABASE_URL: unknown scheme in %q", url)
	}
	if err != nil {
		log.Fatal(err)
	}
	// database/sql keeps only 2 idle connections by default, which means reconnecting under load:
	// a fixed pool of POOL_SIZE, all kept idle.
	d.SetMaxOpenConns(poolSize())
	d.SetMaxIdleConns(poolSize())
	if err := d.Ping(); err != nil {
		log.Fatal(err)
	}
	return d
}

func text(ctx *fasthttp.RequestCtx, body string) {
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.SetBodyString(body)
}

func hello(ctx *fasthttp.RequestCtx) { text(ctx, "Hello World!") }

func greeting(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("name").(string)
	if !nameRe.MatchString(name) {
		ctx.Error("Not Found", fasthttp.StatusNotFound)
		return
	}
	text(ctx, "Hello, "+name)
}

func msgpackSum(ctx *fasthttp.RequestCtx) {
	var sum int64
	var rec Record
	for _, b := range packed {
		if _, err := rec.UnmarshalMsg(b); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		sum += rec.Count
	}
	text(ctx, strconv.FormatInt(sum, 10))
}

// intParam reads query parameter name; absent means def, anything outside [lo, hi] is an error.
func intParam(ctx *fasthttp.RequestCtx, name string, def, lo, hi int64) (int64, bool) {
	args := ctx.QueryArgs()
	if !args.Has(name) {
		return def, true
	}
	n, err := strconv.ParseInt(string(args.Peek(name)), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

func jsonLen(ctx *fasthttp.RequestCtx) {
	k, ok := intParam(ctx, "n", 1000, 1, int64(len(records)))
	if !ok {
		ctx.Error("bad n", fasthttp.StatusBadRequest)
		return
	}
	out, err := json.Marshal(records[:k])
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	text(ctx, strconv.Itoa(len(out)))
}

func transferBody(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBody(transfer)
}

func loop(ctx *fasthttp.RequestCtx) {
	n, ok := intParam(ctx, "n", 1000000, 0, 10000000)
	if !ok {
		ctx.Error("bad n", fasthttp.StatusBadRequest)
		return
	}
	var c int64
	for i := int64(0); i < n; i++ {
		if (3*i+1)%7 == 0 {
			c++
		}
	}
	text(ctx, strconv.FormatInt(c, 10))
}

func products(ctx *fasthttp.RequestCtx) {
	if db == nil {
		ctx.Error("DATABASE_URL not set", fasthttp.StatusServiceUnavailable)
		return
	}
	// Not QueryContext(ctx): fasthttp recycles the RequestCtx after the handler returns, while
	// database/sql may still watch a context's Done channel from another goroutine.
	rows, err := db.Query(productsSQL)
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	defer rows.Close()
	list := make([]Product, 0, 20)
	for rows.Next() {
		var p Product
		if err := rows.Scan(&p.ID, &p.Name, &p.Description, &p.Price, &p.Stock, &p.CreatedAt); err != nil {
			ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
			return
		}
		list = append(list, p)
	}
	if err := rows.Err(); err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	out, err := json.Marshal(list)
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(out)
}

// poolSize is POOL_SIZE, the database connections this process may open (8 when unset).
func poolSize() int {
	if n, err := strconv.Atoi(os.Getenv("POOL_SIZE")); err == nil && n > 0 {
		return n
	}
	return 8
}
