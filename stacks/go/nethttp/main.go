// Package main owns the go/nethttp stack: net/http server, routes and per-request work of every scenario.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
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

// Item is one item of the shop (scenarios/shop.toml); field order gives its JSON key order.
type Item struct {
	ID   int      `json:"id"`
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// Found is a search's answer: the word and the ids of the items tagged with it, ascending.
type Found struct {
	Q     string `json:"q"`
	Items []int  `json:"items"`
}

// Cart is the body of POST /cart; pointers tell a missing field from a zero.
type Cart struct {
	Item *int `json:"item"`
	Qty  *int `json:"qty"`
}

// words are the tags of the shop's items.
var words = [5]string{"red", "blue", "green", "oak", "steel"}

var (
	// Compiled once at start-up; matched per request like the article's router.
	greetingRe = regexp.MustCompile(`^/greeting/([a-z]+)$`)

	packed   [][]byte // the 1,000 encoded msgpack records, decoded again on every request
	records  []Record // decoded once, encoded again on every /json request
	transfer []byte   // records.json, served as is
	db       *sql.DB
	items    []Item // the shop's 50 items, id i at index i-1, encoded again on every request
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

	addr := "127.0.0.1:" + os.Getenv("PORT")
	log.Printf("go/nethttp listening on %s with GOMAXPROCS=%d", addr, runtime.GOMAXPROCS(0))
	log.Fatal(http.ListenAndServe(addr, mux))
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
	for i := 1; i <= 50; i++ {
		items = append(items, Item{ID: i, Name: "item " + strconv.Itoa(i), Tags: []string{words[i%5], words[(i*3)%5]}})
	}
}

func openDB(url string) *sql.DB {
	var d *sql.DB
	var err error
	if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
		// Read-only: the stack never writes; the harness's live-data probe writes from outside.
		d, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
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
	rows, err := db.QueryContext(r.Context(), "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id")
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	defer rows.Close()
	list := make([]Product, 0, 20)
	for rows.Next() {
		var p Product
		if err := rows.Scan(&p.ID, &p.Name, &p.Description, &p.Price, &p.Stock, &p.CreatedAt); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		list = append(list, p)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	out, _ := json.Marshal(list)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
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

// itemByID is the shop's item with id i, or nil.
func itemByID(i int) *Item {
	if i < 1 || i > len(items) {
		return nil
	}
	return &items[i-1]
}

// item answers the shop's item by id, encoded per request; an unknown or non-numeric id is 404.
func item(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	i, err := strconv.Atoi(id)
	// Atoi takes a sign: digits only, as in the other stacks' routes.
	it := itemByID(i)
	if err != nil || strings.ContainsFunc(id, func(c rune) bool { return c < '0' || c > '9' }) || it == nil {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, it)
}

// search answers the ids of the items tagged q, ascending, looked up on every request.
func search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	found := Found{Q: q, Items: []int{}}
	for _, it := range items {
		if it.Tags[0] == q || it.Tags[1] == q {
			found.Items = append(found.Items, it.ID)
		}
	}
	writeJSON(w, found)
}

// cart puts an item in the cart: 201; an unknown item is 404, a body that is not
// {"item": n, "qty": n} is 400.
func cart(w http.ResponseWriter, r *http.Request) {
	var c Cart
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Item == nil || c.Qty == nil {
		http.Error(w, "the body must be {\"item\": n, \"qty\": n}", http.StatusBadRequest)
		return
	}
	if itemByID(*c.Item) == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte("added " + strconv.Itoa(*c.Qty) + " of " + strconv.Itoa(*c.Item)))
}

// poolSize is POOL_SIZE, the database connections this process may open (8 when unset).
func poolSize() int {
	if n, err := strconv.Atoi(os.Getenv("POOL_SIZE")); err == nil && n > 0 {
		return n
	}
	return 8
}
