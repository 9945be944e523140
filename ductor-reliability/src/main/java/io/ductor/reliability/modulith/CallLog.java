package io.ductor.reliability.modulith;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.stereotype.Component;

import io.ductor.effect.EffectContext;

/**
 * Records a listener call with its publication's key, committed at once on a connection
 * of its own (outside the listener's transaction), so that a call a kill interrupted is
 * still counted.
 */
@Component
class CallLog {

	private final DataSource dataSource;

	CallLog(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/**
	 * @return the publication's key
	 */
	String record(String listener, OrderPlaced event) {
		String key = EffectContext.current().idempotencyKey();
		try (Connection connection = this.dataSource.getConnection();
				PreparedStatement statement = connection
					.prepareStatement("INSERT INTO listener_call (listener, publication_key, seq) VALUES (?, ?, ?)")) {
			connection.setAutoCommit(true);
			statement.setString(1, listener);
			statement.setString(2, key);
			statement.setLong(3, event.seq());
			statement.executeUpdate();
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
		return key;
	}

}
