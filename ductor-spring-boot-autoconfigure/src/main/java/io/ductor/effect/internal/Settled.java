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
 * idempotency_key}). A completion also says whether it was {@code compensated}: a
 * compensation waits for it, which its settling may make due.
 */
public record Settled(long id, EffectStatus status, String effectName, String key, boolean compensated) {

	public Settled(long id, EffectStatus status, String effectName, String key) {
		this(id, status, effectName, key, false);
	}

	static Settled read(ResultSet rs) throws SQLException {
		return new Settled(rs.getLong("id"), DbValues.parse(EffectStatus.class, rs.getString("status")),
				rs.getString("effect_name"), rs.getString("idempotency_key"));
	}

	/**
	 * Reads a row of a completion, which also says whether a compensation waits for it.
	 */
	static Settled readCompleted(ResultSet rs) throws SQLException {
		return new Settled(rs.getLong("id"), DbValues.parse(EffectStatus.class, rs.getString("status")),
				rs.getString("effect_name"), rs.getString("idempotency_key"), rs.getBoolean("compensated"));
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
