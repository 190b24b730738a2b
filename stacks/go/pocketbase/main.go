// Package main owns the go/pocketbase stack: a PocketBase app, its product collection and the custom routes.
package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/core"
	"github.com/vmihailenco/msgpack/v5"
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

// Product is the contract's JSON shape of one row; PocketBase's own record id is not part of it.
type Product struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Price       float64 `json:"price"`
	Stock       int64   `json:"stock"`
	CreatedAt   string  `json:"created_at"`
}

const collectionName = "product"

var (
	// Compiled once; the router's {name} wildcard hands it one path segment.
	nameRe = regexp.MustCompile(`^[a-z]+$`)

	packed   [][]byte // the 1,000 encoded msgpack records, decoded again on every request
	records  []Record // decoded once, encoded again on every /json request
	transfer []byte   // records.json, served as is
)

func main() {
	dataDir := os.Getenv("DATA_DIR")
	load(dataDir)

	// POOL_SIZE caps PocketBase's data database pool (its own default: 120 open, 15 idle), like
	// every stack's pool; the auxiliary (logs) database keeps PocketBase's defaults.
	app := pocketbase.NewWithConfig(pocketbase.Config{
		DBConnect:        dbConnect,
		DataMaxOpenConns: poolSize(),
		DataMaxIdleConns: poolSize(),
	})

	app.OnServe().BindFunc(func(se *core.ServeEvent) error {
		// No browser or installer link for a first superuser: the benchmark needs none.
		se.InstallerFunc = nil
		if err := prepare(se.App, filepath.Join(dataDir, "products.sqlite")); err != nil {
			return err
		}
		routes(se)
		log.Printf("go/pocketbase: %s, data dir %s", driverName, se.App.DataDir())
		return se.Next()
	})

	// `serve --http=HOST:PORT --dir=...` comes from the start command: PocketBase's own CLI.
	if err := app.Start(); err != nil {
		log.Fatal(err)
	}
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

// prepare turns request logging off and makes sure the product collection exists and holds the fixture rows.
func prepare(app core.App, fixture string) error {
	// PocketBase logs every request into auxiliary.db by default; none of the peer stacks does
	// comparable work per request, so logs are off (MaxDays = 0 is PocketBase's switch for that).
	if s := app.Settings(); s.Logs.MaxDays != 0 {
		s.Logs.MaxDays = 0
		if err := app.Save(s); err != nil {
			return err
		}
	}

	col, err := app.FindCollectionByNameOrId(collectionName)
	if err != nil {
		col = core.NewBaseCollection(collectionName)
		// PocketBase's own `id` is a text primary key; the contract's integer id is `pid`.
		col.Fields.Add(
			&core.NumberField{Name: "pid", OnlyInt: true},
			&core.TextField{Name: "name"},
			&core.TextField{Name: "description"},
			&core.NumberField{Name: "price"},
			&core.NumberField{Name: "stock", OnlyInt: true},
			&core.TextField{Name: "created_at"},
		)
		col.AddIndex("idx_product_pid", true, "pid", "")
		if err := app.Save(col); err != nil {
			return fmt.Errorf("create collection: %w", err)
		}
	}

	n, err := app.CountRecords(col)
	if err != nil || n > 0 {
		return err
	}
	src, err := sql.Open(fixtureDriver, fixture)
	if err != nil {
		return err
	}
	defer src.Close()
	rows, err := src.Query("SELECT id, name, description, price, stock, created_at FROM product ORDER BY id")
	if err != nil {
		return fmt.Errorf("read %s: %w", fixture, err)
	}
	defer rows.Close()
	return app.RunInTransaction(func(tx core.App) error {
		for rows.Next() {
			var p Product
			if err := rows.Scan(&p.ID, &p.Name, &p.Description, &p.Price, &p.Stock, &p.CreatedAt); err != nil {
				return err
			}
			r := core.NewRecord(col)
			r.Set("pid", p.ID)
			r.Set("name", p.Name)
			r.Set("description", p.Description)
			r.Set("price", p.Price)
			r.Set("stock", p.Stock)
			r.Set("created_at", p.CreatedAt)
			if err := tx.Save(r); err != nil {
				return err
			}
		}
		return rows.Err()
	})
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

func routes(se *core.ServeEvent) {
	r := se.Router

	r.GET("/{$}", func(e *core.RequestEvent) error {
		return e.String(http.StatusOK, "Hello World!")
	})

	r.GET("/greeting/{name}", func(e *core.RequestEvent) error {
		name := e.Request.PathValue("name")
		if !nameRe.MatchString(name) {
			return e.String(http.StatusNotFound, "Not Found")
		}
		return e.String(http.StatusOK, "Hello, "+name)
	})

	r.GET("/msgpack", func(e *core.RequestEvent) error {
		var sum int64
		var rec Record
		for _, b := range packed {
			rec = Record{}
			if err := msgpack.Unmarshal(b, &rec); err != nil {
				return err
			}
			sum += rec.Count
		}
		return e.String(http.StatusOK, strconv.FormatInt(sum, 10))
	})

	r.GET("/json", func(e *core.RequestEvent) error {
		k, ok := intParam(e.Request, "n", 1000, 1, int64(len(records)))
		if !ok {
			return e.String(http.StatusBadRequest, "bad n")
		}
		out, err := json.Marshal(records[:k])
		if err != nil {
			return err
		}
		return e.String(http.StatusOK, strconv.Itoa(len(out)))
	})

	r.GET("/transfer", func(e *core.RequestEvent) error {
		e.Response.Header().Set("Content-Length", strconv.Itoa(len(transfer)))
		return e.Blob(http.StatusOK, "application/json", transfer)
	})

	r.GET("/loop", func(e *core.RequestEvent) error {
		n, ok := intParam(e.Request, "n", 1000000, 0, 10000000)
		if !ok {
			return e.String(http.StatusBadRequest, "bad n")
		}
		var c int64
		for i := int64(0); i < n; i++ {
			if (3*i+1)%7 == 0 {
				c++
			}
		}
		return e.String(http.StatusOK, strconv.FormatInt(c, 10))
	})

	// Read through PocketBase's record API on every request: no cache, so a direct UPDATE of the
	// product table in pb_data/data.db shows on the next request.
	r.GET("/products", func(e *core.RequestEvent) error {
		var recs []*core.Record
		if err := e.App.RecordQuery(collectionName).OrderBy("pid ASC").All(&recs); err != nil {
			return err
		}
		list := make([]Product, len(recs))
		for i, rec := range recs {
			list[i] = Product{
				ID:          int64(rec.GetInt("pid")),
				Name:        rec.GetString("name"),
				Description: rec.GetString("description"),
				Price:       rec.GetFloat("price"),
				Stock:       int64(rec.GetInt("stock")),
				CreatedAt:   rec.GetString("created_at"),
			}
		}
		return e.JSON(http.StatusOK, list)
	})
}

// poolSize is POOL_SIZE, the database connections this process may open (8 when unset).
func poolSize() int {
	if n, err := strconv.Atoi(os.Getenv("POOL_SIZE")); err == nil && n > 0 {
		return n
	}
	return 8
}
