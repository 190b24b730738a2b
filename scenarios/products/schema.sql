-- Table product of the built-in products contract (docs/scenarios.md), the same in SQLite and PostgreSQL.
CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, stock INTEGER NOT NULL, created_at TEXT NOT NULL);
