package io.ductor.modulithmachine;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The application under the publication lifecycle's state-machine test. */
@SpringBootApplication
public class MachineApp {

	/** The application's own tables. */
	public static final String SCHEMA = """
			CREATE TABLE IF NOT EXISTS desk_order (id text PRIMARY KEY);
			CREATE TABLE IF NOT EXISTS ledger_booking (booking_key text PRIMARY KEY, order_id text NOT NULL)""";

}
