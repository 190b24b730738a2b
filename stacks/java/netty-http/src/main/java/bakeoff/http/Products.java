// Products.java: the products scenario: table product read from the SQLite file on every request.
package bakeoff.http;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.netty.util.concurrent.FastThreadLocal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.sqlite.SQLiteConfig;

/** One connection per event loop, opened on its first request and used only by that loop's thread:
 *  a SQLite read runs in the process and costs microseconds, so it runs where the request is
 *  handled (as rust/actix does with rusqlite), and WORKERS still counts every thread doing work. */
final class Products {
    private static final String SQL =
            "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id";

    record Product(long id, String name, String description, double price, long stock,
                   @JsonProperty("created_at") String createdAt) {}

    private final String jdbcUrl;
    private final FastThreadLocal<PreparedStatement> statements = new FastThreadLocal<>() {
        @Override
        protected PreparedStatement initialValue() throws SQLException {
            SQLiteConfig config = new SQLiteConfig();
            // The live-data probe writes the file from another process; wait for its lock.
            config.setBusyTimeout(5000);
            Connection conn = DriverManager.getConnection(jdbcUrl, config.toProperties());
            return conn.prepareStatement(SQL);
        }

        @Override
        protected void onRemoval(PreparedStatement st) throws SQLException {
            st.getConnection().close();
        }
    };

    private Products(String jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
    }

    /** DATABASE_URL is sqlite:///absolute/path; null when unset (the products route then answers 500). */
    static Products open(String url) {
        if (url == null || url.isBlank()) {
            return null;
        }
        if (!url.startsWith("sqlite://")) {
            throw new IllegalArgumentException("DATABASE_URL must be sqlite:///path, not " + url);
        }
        return new Products("jdbc:sqlite:" + url.substring("sqlite://".length()));
    }

    /** The 20 rows, read now; a failed connection is dropped so the next request opens a new one. */
    List<Product> all() throws SQLException {
        PreparedStatement st = statements.get();
        try (ResultSet rs = st.executeQuery()) {
            List<Product> rows = new ArrayList<>(20);
            while (rs.next()) {
                rows.add(new Product(rs.getLong(1), rs.getString(2), rs.getString(3),
                        rs.getDouble(4), rs.getLong(5), rs.getString(6)));
            }
            return rows;
        } catch (SQLException e) {
            statements.remove();
            throw e;
        }
    }
}
