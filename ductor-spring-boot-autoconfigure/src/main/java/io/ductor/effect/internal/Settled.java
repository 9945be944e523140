package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.ductor.effect.EffectStatus;
import io.ductor.internal.DbValues;

/**
 * An intent whose status a completion, a redrive or a reconciliation round changed: what
 * the statements that settle intents return ({@code id, status, effect_name,
 * idempotency_key}).
 */
public record Settled(long id, EffectStatus status, String effectName, String key) {

	static Settled read(ResultSet rs) throws SQLException {
		return new Settled(rs.getLong("id"), DbValues.parse(EffectStatus.class, rs.getString("status")),
				rs.getString("effect_name"), rs.getString("idempotency_key"));
	}

	/** Runs the query and reads every row it returns. */
	static List<Settled> readAll(PreparedStatement statement) throws SQLException {
		List<Settled> settled = new ArrayList<>();
		try (ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				settled.add(read(rs));
			}
		}
		return settled;
	}

}
