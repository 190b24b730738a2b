-- The shop's tables in PostgreSQL, as schema.sql's: the cart's lines are numbered by a SERIAL
-- (SQLite's INTEGER PRIMARY KEY does that by itself).
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL);
CREATE TABLE tags (item_id INTEGER NOT NULL REFERENCES items (id), tag TEXT NOT NULL);
CREATE INDEX tags_by_tag ON tags (tag, item_id);
CREATE TABLE cart (id SERIAL PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items (id), qty INTEGER NOT NULL);
