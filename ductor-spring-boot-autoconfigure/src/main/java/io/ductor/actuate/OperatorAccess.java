package io.ductor.actuate;

import org.springframework.boot.actuate.endpoint.SecurityContext;

/**
 * Who may change intents through the {@code ductor} endpoint over HTTP. Without a bean of
 * this type every caller the application lets reach the endpoint may; the operator
 * console provides one that asks for its operator role when Spring Security is present.
 */
@FunctionalInterface
public interface OperatorAccess {

	/**
	 * @param caller the caller of a write operation
	 * @return whether the caller may change intents
	 */
	boolean mayWrite(SecurityContext caller);

}
