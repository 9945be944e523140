package io.ductor.console;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.core.env.Environment;

/**
 * Checks once, when the application's beans are ready, whether the console can reach the
 * {@code ductor} endpoint ({@link EndpointReach}), logs a warning naming the property to
 * set when it cannot, and gives the page the same message.
 */
class ConsoleEndpointCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(DuctorConsoleAutoConfiguration.class);

	private final Environment environment;

	private final ObjectProvider<PathMappedEndpoints> endpoints;

	private final String consolePath;

	private volatile boolean checked;

	private volatile EndpointReach.@Nullable Finding finding;

	ConsoleEndpointCheck(Environment environment, ObjectProvider<PathMappedEndpoints> endpoints, String consolePath) {
		this.environment = environment;
		this.endpoints = endpoints;
		this.consolePath = consolePath;
	}

	@Override
	public void afterSingletonsInstantiated() {
		EndpointReach.Finding found = finding();
		if (found != null) {
			logger.warn(found.message());
		}
	}

	/**
	 * @return what stands between the console and its endpoint, or {@code null} when
	 * nothing does
	 */
	EndpointReach.@Nullable Finding finding() {
		if (!this.checked) {
			synchronized (this) {
				if (!this.checked) {
					this.finding = EndpointReach.check(this.environment, this.endpoints.getIfAvailable(),
							this.consolePath);
					this.checked = true;
				}
			}
		}
		return this.finding;
	}

}
