// The scala/pekko-http stack: pekko-http routing DSL server, its JSON/MessagePack/JDBC work per scenario.

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}
import java.util.concurrent.Executors

import scala.collection.immutable.ListMap
import scala.concurrent.{ExecutionContext, Future}

import com.typesafe.config.ConfigFactory
import com.zaxxer.hikari.{HikariConfig, HikariDataSource}
import org.apache.pekko.actor.ActorSystem
import org.apache.pekko.http.scaladsl.Http
import org.apache.pekko.http.scaladsl.marshallers.sprayjson.SprayJsonSupport._
import org.apache.pekko.http.scaladsl.model.{ContentTypes, HttpEntity}
import org.apache.pekko.http.scaladsl.server.Directives._
import org.apache.pekko.http.scaladsl.server.{MalformedQueryParamRejection, Route}
import org.msgpack.core.{MessagePack, MessageUnpacker}
import org.msgpack.core.buffer.ArrayBufferInput
import org.msgpack.value.{Value, ValueFactory}
import spray.json._

final case class Record(id: Long, name: String, description: String, kind: String, count: Long, createdAt: Double)

object Json {
  // Double.toString prints 1.569882498125E9; BigDecimal.valueOf keeps the same shortest digits and
  // toPlainString prints them without an exponent, the contract's canonical form.
  def num(d: Double): JsNumber = JsNumber(BigDecimal(java.math.BigDecimal.valueOf(d).toPlainString))

  // JsObject keeps its fields in a Map; a ListMap keeps the canonical key order (a plain Map of more
  // than four entries is a HashMap, whose order is arbitrary).
  implicit object RecordWriter extends RootJsonWriter[Record] {
    def write(r: Record): JsValue = JsObject(ListMap(
      "id" -> JsNumber(r.id),
      "name" -> JsString(r.name),
      "description" -> JsString(r.description),
      "type" -> JsString(r.kind),
      "count" -> JsNumber(r.count),
      "created_at" -> num(r.createdAt)))
  }
}

object Main {
  import Json._

  // One unpacker per thread, reset onto each record (msgpack-core's documented reuse) instead of a
  // new unpacker and its buffers for each of the 1,000 records of a request.
  private val unpackers = ThreadLocal.withInitial[(MessageUnpacker, ArrayBufferInput)] { () =>
    val in = new ArrayBufferInput(Array.emptyByteArray)
    (MessagePack.newDefaultUnpacker(in), in)
  }

  private def unpacker(bytes: Array[Byte]): MessageUnpacker = {
    val (u, in) = unpackers.get()
    in.reset(bytes)
    u.reset(in)
    u
  }

  /** The default decoder: msgpack-java's generic Value tree (a map of Values), then the Record's
    * fields looked up by key, like the other stacks' generic decoders. */
  def decodeGeneric(bytes: Array[Byte]): Record = {
    val m = unpacker(bytes).unpackValue().asMapValue().map()
    def field(k: String): Value = m.get(ValueFactory.newString(k))
    Record(
      field("id").asIntegerValue().toLong,
      field("name").asStringValue().asString(),
      field("description").asStringValue().asString(),
      field("type").asStringValue().asString(),
      field("count").asIntegerValue().toLong,
      field("created_at").asFloatValue().toDouble)
  }

  /** Variant `msgpack-fields`: a hand-written loop over the map's keys, no intermediate tree. */
  def decodeFields(bytes: Array[Byte]): Record = {
    val u = unpacker(bytes)
    var id, count = 0L
    var name, description, kind = ""
    var createdAt = 0.0
    var i = u.unpackMapHeader()
    while (i > 0) {
      u.unpackString() match {
        case "id"          => id = u.unpackLong()
        case "name"        => name = u.unpackString()
        case "description" => description = u.unpackString()
        case "type"        => kind = u.unpackString()
        case "count"       => count = u.unpackLong()
        case "created_at"  => createdAt = u.unpackDouble()
        case _             => u.skipValue()
      }
      i -= 1
    }
    Record(id, name, description, kind, count, createdAt)
  }

  /** MSGPACK_DECODER=fields selects the hand-written decoder; anything else the generic one. */
  val decode: Array[Byte] => Record =
    if (sys.env.get("MSGPACK_DECODER").contains("fields")) decodeFields else decodeGeneric

  def main(args: Array[String]): Unit = {
    // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
    val host = sys.env.get("HOST").filter(_.nonEmpty).getOrElse("127.0.0.1")
    val port = sys.env("PORT").toInt
    val workers = sys.env.get("WORKERS").flatMap(_.toIntOption).getOrElse(1).max(1)
    val dataDir = Paths.get(sys.env("DATA_DIR"))

    // WORKERS sizes the default dispatcher, which runs the HTTP stages and the routes, and pekko's
    // internal dispatcher (its own actors), which would otherwise have up to 64 threads. The listen
    // backlog is 1024, tokio's default (pekko's default of 100 left 70 of 256 concurrent
    // new connections unanswered for a whole 5 s trial: their SYNs were dropped and retried).
    val config = ConfigFactory.parseString(
      s"""pekko.actor.default-dispatcher.fork-join-executor {
         |  parallelism-min = $workers
         |  parallelism-max = $workers
         |  parallelism-factor = 1.0
         |}
         |pekko.actor.internal-dispatcher.fork-join-executor {
         |  parallelism-min = $workers
         |  parallelism-max = $workers
         |  parallelism-factor = 1.0
         |}
         |pekko.loglevel = WARNING
         |pekko.http.server.backlog = 1024
         |""".stripMargin).withFallback(ConfigFactory.load())
    implicit val system: ActorSystem = ActorSystem("bakeoff", config)

    val packed: Array[Array[Byte]] = {
      val u = MessagePack.newDefaultUnpacker(Files.readAllBytes(dataDir.resolve("records.msgpack")))
      val n = u.unpackArrayHeader()
      val out = Array.fill(n)(u.readPayload(u.unpackBinaryHeader()))
      u.close()
      out
    }
    val records: Vector[Record] = packed.iterator.map(decode).toVector
    val transfer = HttpEntity(ContentTypes.`application/json`, Files.readAllBytes(dataDir.resolve("records.json")))
    val products = sys.env.get("DATABASE_URL").filter(_.nonEmpty).map(new Products(_))

    def intParam(v: Option[String], default: Int, lo: Int, hi: Int): Option[Int] =
      v.fold(Option(default))(_.toIntOption.filter(n => n >= lo && n <= hi))

    val route: Route = get {
      concat(
        pathSingleSlash {
          complete("Hello World!")
        },
        // The greeting route: a regex path matcher, compiled once when the route is built.
        path("greeting" / "[a-z]+".r) { name =>
          complete("Hello, " + name)
        },
        path("msgpack") {
          complete {
            var sum = 0L
            var i = 0
            while (i < packed.length) { sum += decode(packed(i)).count; i += 1 }
            sum.toString
          }
        },
        path("json") {
          parameter("n".optional) { n =>
            intParam(n, 1000, 1, records.length) match {
              case Some(k) => complete(JsArray(records.take(k).map(RecordWriter.write)).compactPrint.getBytes(UTF_8).length.toString)
              case None    => reject(MalformedQueryParamRejection("n", "an integer in 1..1000"))
            }
          }
        },
        path("transfer") {
          complete(transfer)
        },
        path("loop") {
          parameter("n".optional) { n =>
            intParam(n, 1000000, 0, 10000000) match {
              case Some(limit) =>
                complete {
                  var c = 0L
                  var i = 0L
                  while (i < limit) { if ((3 * i + 1) % 7 == 0) c += 1; i += 1 }
                  c.toString
                }
              case None => reject(MalformedQueryParamRejection("n", "an integer in 0..10000000"))
            }
          }
        },
        path("products") {
          products match {
            case Some(db) => complete(db.all())
            case None     => failWith(new IllegalStateException("DATABASE_URL not set"))
          }
        }
      )
    }

    Http().newServerAt(host, port).bind(route)
    system.log.warning(s"scala/pekko-http listening on $host:$port, $workers dispatcher threads")
  }
}

/** The product table through a HikariCP pool; JDBC blocks, so queries run on their own thread pool. */
final class Products(url: String) {
  // POOL_SIZE connections (8 when unset), like every stack's pool; the executor that waits on them
  // has as many threads.
  private val poolSize = sys.env.get("POOL_SIZE").flatMap(_.toIntOption).filter(_ > 0).getOrElse(8)
  private val ds = {
    val c = new HikariConfig()
    if (url.startsWith("sqlite://")) {
      c.setJdbcUrl("jdbc:sqlite:" + url.stripPrefix("sqlite://"))
    } else {
      val u = new URI(url) // postgres://USER@HOST:PORT/DB, trust authentication
      c.setJdbcUrl(s"jdbc:postgresql://${u.getHost}:${u.getPort}${u.getPath}")
      c.setUsername(u.getUserInfo)
    }
    c.setMaximumPoolSize(poolSize)
    new HikariDataSource(c)
  }
  private implicit val blocking: ExecutionContext =
    ExecutionContext.fromExecutor(Executors.newFixedThreadPool(poolSize))

  private val sql = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"

  def all(): Future[JsValue] = Future {
    val conn = ds.getConnection()
    val st = conn.prepareStatement(sql)
    try {
      val rs = st.executeQuery()
      val rows = Vector.newBuilder[JsValue]
      while (rs.next()) {
        rows += JsObject(ListMap(
          "id" -> JsNumber(rs.getLong(1)),
          "name" -> JsString(rs.getString(2)),
          "description" -> JsString(rs.getString(3)),
          "price" -> Json.num(rs.getDouble(4)),
          "stock" -> JsNumber(rs.getLong(5)),
          "created_at" -> JsString(rs.getString(6))))
      }
      JsArray(rows.result())
    } finally { st.close(); conn.close() }
  }
}
