package io.ductor.autoconfigure.internal;

import io.ductor.DuctorException;

/**
 * Ductor's configuration names something that does not exist: a property Ductor does not
 * have, an effect override or recurring alarm of no effect. Thrown at start-up; its
 * message names the property and where it was set, and {@link #action()} says what to do
 * instead. Not an API for applications: catch {@link DuctorException}.
 */
public class DuctorConfigurationException extends DuctorException {

	private final String action;

	public DuctorConfigurationException(String description, String action) {
		super(description);
		this.action = action;
	}

	/**
	 * @return what to change, for the failure analysis of the start-up
	 */
	public String action() {
		return this.action;
	}

}
