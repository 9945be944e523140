/**
 * Auto-configuration of the {@code ductor} actuator endpoint.
 */
@NullMarked
package io.ductor.actuate.autoconfigure;

import org.jspecify.annotations.NullMarked;
