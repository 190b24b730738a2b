-- wrk: a new connection per request (the server closes after answering "Connection: close"),
-- as bakeoff-load's --close; for bench/load-vs-wrk.sh --tls.
wrk.headers["Connection"] = "close"
