package io.ductor.reliability.workload;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.ductor.idempotency.web.TenantScopeResolver;

/**
 * The workload the reliability suite attacks: a small application on Ductor's
 * auto-configuration that ticks a few runs with unique stamps (each tick records a
 * {@code @DurableEffect} call to a deduplicating receiver), and answers idempotent HTTP
 * requests. The suite's driver launches it in JVMs of its own, kills, pauses and
 * disconnects it, and checks the database afterwards.
 */
@SpringBootApplication
@EnableConfigurationProperties(WorkloadProperties.class)
public class WorkloadApplication {

	public static void main(String[] args) {
		SpringApplication.run(WorkloadApplication.class, args);
	}

	/**
	 * Keys are scoped by the {@code X-Tenant} header, so the suite can try to cross
	 * tenants.
	 */
	@Bean
	TenantScopeResolver tenantScopeResolver() {
		return (request) -> {
			String tenant = request.getHeader("X-Tenant");
			return (tenant != null) ? tenant : "";
		};
	}

}
