// Package main owns the go/nethttp stack: net/http server, routes and per-request work of every scenario.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/vmihailenco/msgpack/v5"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver
)

// Record is one fixture record; field order gives the canonical JSON key order.
type Record struct {
	ID          int64   `json:"id" msgpack:"id"`
	Name        string  `json:"name" msgpack:"name"`
	Description string  `json:"description" msgpack:"description"`
	Type        string  `json:"type" msgpack:"type"`
	Count       int64   `json:"count" msgpack:"count"`
	CreatedAt   float64 `json:"created_at" msgpack:"created_at"`
}

// Product is one row of table product.
type Product struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Price       float64 `json:"price"`
	Stock       int64   `json:"stock"`
	CreatedAt   string  `json:"created_at"`
}

// Item is one row of the shop's table items (scenarios/shop.toml); field order gives its JSON key order.
type Item struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Price int64  `json:"price"`
}

// CartLine is one row of the shop's table cart, as POST /cart wrote it.
type CartLine struct {
	ID     int64 `json:"id"`
	ItemID int64 `json:"item_id"`
	Qty    int64 `json:"qty"`
}

// Cart is the body of POST /cart; pointers tell a missing field from a zero.
type Cart struct {
	Item *int `json:"item"`
	Qty  *int `json:"qty"`
}

// The shop's queries, in SQLite's placeholders (?) and PostgreSQL's ($1); sqlite picks one.
const (
	itemSQLite   = "SELECT id, name, price FROM items WHERE id = ?"
	itemPG       = "SELECT id, name, price FROM items WHERE id = $1"
	searchSQLite = "SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = ? ORDER BY i.id"
	searchPG     = "SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = $1 ORDER BY i.id"
	cartSQLite   = "INSERT INTO cart (item_id, qty) SELECT id, ? FROM items WHERE id = ? RETURNING id, item_id, qty"
	cartPG       = "INSERT INTO cart (item_id, qty) SELECT id, $1 FROM items WHERE id = $2 RETURNING id, item_id, qty"
)

var (
	// Compiled once at start-up; matched per request like the article's router.
	greetingRe = regexp.MustCompile(`^/greeting/([a-z]+)$`)

	packed   [][]byte // the 1,000 encoded msgpack records, decoded again on every request
	records  []Record // decoded once, encoded again on every /json request
	transfer []byte   // records.json, served as is
	db       *sql.DB
	sqlite   bool // db is SQLite (? placeholders), not PostgreSQL ($1)
)

func main() {
	dataDir := os.Getenv("DATA_DIR")
	load(dataDir)
	if url := os.Getenv("DATABASE_URL"); url != "" {
		db = openDB(url)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", hello)
	// One-segment pattern (not the "/greeting/" subtree, which would 307-redirect "/greeting");
	// the regexp decides whether the segment is a name.
	mux.HandleFunc("GET /greeting/{name}", greeting)
	mux.HandleFunc("GET /msgpack", msgpackSum)
	mux.HandleFunc("GET /json", jsonLen)
	mux.HandleFunc("GET /transfer", transferBody)
	mux.HandleFunc("GET /loop", loop)
	mux.HandleFunc("GET /products", products)
	// The shop of scenarios/shop.toml.
	mux.HandleFunc("GET /items/{id}", item)
	mux.HandleFunc("GET /search", search)
	mux.HandleFunc("POST /cart", cart)

	// HOST: the address to bind (127.0.0.1 unless the lab places the server on a host of its own).
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, os.Getenv("PORT"))
	log.Printf("go/nethttp listening on %s (%s) with GOMAXPROCS=%d", addr, os.Getenv("PROTOCOL"), runtime.GOMAXPROCS(0))
	log.Fatal(serve(&http.Server{Addr: addr, Handler: mux, Protocols: new(http.Protocols)}))
}

// serve speaks the PROTOCOL the lab sets: h1 (HTTP/1.1), h1-tls and h2 (one TLS server offering
// both by ALPN, as net/http does by default, with the run's TLS_CERT and TLS_KEY), or h2c
// (HTTP/1.1 and cleartext HTTP/2 with prior knowledge).
func serve(srv *http.Server) error {
	srv.Protocols.SetHTTP1(true)
	switch os.Getenv("PROTOCOL") {
	case "h1-tls", "h2":
		srv.Protocols.SetHTTP2(true)
		return srv.ListenAndServeTLS(os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"))
	case "h2c":
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	return srv.ListenAndServe()
}

func load(dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "records.msgpack"))
	if err != nil {
		log.Fatal(err)
	}
	if err := msgpack.Unmarshal(raw, &packed); err != nil {
		log.Fatal(err)
	}
	records = make([]Record, len(packed))
	for i, b := range packed {
		if err := msgpack.Unmarshal(b, &records[i]); err != nil {
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
		// Read-write: the shop's POST /cart writes. Every connection of the pool may write, one
		// at a time: the busy timeout makes a connection wait up to 5 s for the lock.
		sqlite = true
		d, err = sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	} else {
		d, err = sql.Open("pgx", url)
	}
	if err != nil {
		log.Fatal(err)
	}
	// database/sql keeps only 2 idle connections by default; under load that means reconnecting
	// on most requests. A fixed pool, like the other stacks' pools, avoids it.
	d.SetMaxOpenConns(poolSize())
	d.SetMaxIdleConns(poolSize())
	if err := d.Ping(); err != nil {
		log.Fatal(err)
	}
	return d
}

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte(body))
}

func hello(w http.ResponseWriter, r *http.Request) { text(w, "Hello World!") }

func greeting(w http.ResponseWriter, r *http.Request) {
	m := greetingRe.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.NotFound(w, r)
		return
	}
	text(w, "Hello, "+m[1])
}

func msgpackSum(w http.ResponseWriter, r *http.Request) {
	var sum int64
	var rec Record
	for _, b := range packed {
		rec = Record{}
		if err := msgpack.Unmarshal(b, &rec); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		sum += rec.Count
	}
	text(w, strconv.FormatInt(sum, 10))
}

// intParam reads query parameter name; absent means def, anything outside [lo, hi] is an error.
func intParam(r *http.Request, name string, def, lo, hi int64) (int64, bool) {
	q := r.URL.Query()
	if !q.Has(name) {
		return def, true
	}
	n, err := strconv.ParseInt(q.Get(name), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

func jsonLen(w http.ResponseWriter, r *http.Request) {
	k, ok := intParam(r, "n", 1000, 1, int64(len(records)))
	if !ok {
		http.Error(w, "bad n", http.StatusBadRequest)
		return
	}
	out, err := json.Marshal(records[:k])
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	text(w, strconv.Itoa(len(out)))
}

func transferBody(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(transfer)
}

func loop(w http.ResponseWriter, r *http.Request) {
	n, ok := intParam(r, "n", 1000000, 0, 10000000)
	if !ok {
		http.Error(w, "bad n", http.StatusBadRequest)
		return
	}
	var c int64
	for i := int64(0); i < n; i++ {
		if (3*i+1)%7 == 0 {
			c++
		}
	}
	text(w, strconv.FormatInt(c, 10))
}

func products(w http.ResponseWriter, r *http.Request) {
	if db == nil {
		http.Error(w, "DATABASE_URL not set", 500)
		return
	}
	const query = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"
	list, err := queryAll(r, query, func(rows *sql.Rows, p *Product) error {
		return rows.Scan(&p.ID, &p.Name, &p.Description, &p.Price, &p.Stock, &p.CreatedAt)
	})
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	writeJSON(w, list)
}

// queryAll runs query with args and scans every row into a T: the rows, or the first error.
func queryAll[T any](r *http.Request, query string, scan func(*sql.Rows, *T) error, args ...any) ([]T, error) {
	rows, err := db.QueryContext(r.Context(), query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := make([]T, 0, 20)
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		list = append(list, v)
	}
	return list, rows.Err()
}

func writeJSON(w http.ResponseWriter, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// pick is the query for the database in use: SQLite's text or PostgreSQL's.
func pick(lite, pg string) string {
	if sqlite {
		return lite
	}
	return pg
}

// mayExist says whether an item id fits the id column: PostgreSQL's INTEGER is 32-bit (pgx would
// refuse to send a larger one), SQLite's 64.
func mayExist(id int64) bool { return sqlite || id <= math.MaxInt32 && id >= math.MinInt32 }

// item answers the shop's item by id, read from the database on every request; an unknown or
// non-numeric id is 404. (pgx prepares and caches each query text per connection by itself.)
func item(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	// ParseInt takes a sign: digits only, as in the other stacks' routes.
	i, err := strconv.ParseInt(id, 10, 64)
	if err != nil || strings.ContainsFunc(id, func(c rune) bool { return c < '0' || c > '9' }) {
		http.NotFound(w, r)
		return
	}
	if db == nil {
		http.Error(w, "DATABASE_URL not set", 500)
		return
	}
	if !mayExist(i) {
		http.NotFound(w, r)
		return
	}
	var it Item
	err = db.QueryRowContext(r.Context(), pick(itemSQLite, itemPG), i).Scan(&it.ID, &it.Name, &it.Price)
	answerRow(w, r, err, http.StatusOK, it)
}

// answerRow answers a query of one row scanned into v: 404 when there was no row, 500 on
// another error, else v as JSON with status.
func answerRow(w http.ResponseWriter, r *http.Request, err error, status int, v any) {
	switch {
	case err == sql.ErrNoRows:
		http.NotFound(w, r)
	case err != nil:
		http.Error(w, err.Error(), 500)
	default:
		out, _ := json.Marshal(v)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(out)
	}
}

// search answers the items tagged q, by id, read from the database on every request.
func search(w http.ResponseWriter, r *http.Request) {
	if db == nil {
		http.Error(w, "DATABASE_URL not set", 500)
		return
	}
	found, err := queryAll(r, pick(searchSQLite, searchPG), func(rows *sql.Rows, it *Item) error {
		return rows.Scan(&it.ID, &it.Name, &it.Price)
	}, r.URL.Query().Get("q"))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	writeJSON(w, found)
}

// cart writes a line in the cart and answers it: 201; an unknown item is 404, a body that is
// not {"item": n, "qty": n} is 400.
func cart(w http.ResponseWriter, r *http.Request) {
	var c Cart
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Item == nil || c.Qty == nil {
		http.Error(w, "the body must be {\"item\": n, \"qty\": n}", http.StatusBadRequest)
		return
	}
	if db == nil {
		http.Error(w, "DATABASE_URL not set", 500)
		return
	}
	if !mayExist(int64(*c.Item)) {
		http.NotFound(w, r)
		return
	}
	var line CartLine
	err := db.QueryRowContext(r.Context(), pick(cartSQLite, cartPG), *c.Qty, *c.Item).Scan(&line.ID, &line.ItemID, &line.Qty)
	answerRow(w, r, err, http.StatusCreated, line)
}

// poolSize is POOL_SIZE, the database connections this process may open (8 when unset).
func poolSize() int {
	if n, err := strconv.Atoi(os.Getenv("POOL_SIZE")); err == nil && n > 0 {
		return n
	}
	return 8
}
