-- The shop's tables in SQLite: items, their tags (a search looks an item up by tag) and the cart,
-- which every POST /cart adds a line to. Prices are integer cents.
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL);
CREATE TABLE tags (item_id INTEGER NOT NULL REFERENCES items (id), tag TEXT NOT NULL);
CREATE INDEX tags_by_tag ON tags (tag, item_id);
CREATE TABLE cart (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items (id), qty INTEGER NOT NULL);
