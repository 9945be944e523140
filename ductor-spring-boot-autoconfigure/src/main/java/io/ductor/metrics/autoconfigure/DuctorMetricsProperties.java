package io.ductor.metrics.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Ductor's Micrometer meters, under {@code ductor.metrics}.
 *
 * @param enabled Whether Ductor registers its meters when Micrometer is present.
 */
@ConfigurationProperties("ductor.metrics")
public record DuctorMetricsProperties(@DefaultValue("true") boolean enabled) {

}
