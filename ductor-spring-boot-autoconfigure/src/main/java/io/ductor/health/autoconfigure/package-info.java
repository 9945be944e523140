/**
 * Auto-configuration of the {@code ductor} health contributor.
 */
@NullMarked
package io.ductor.health.autoconfigure;

import org.jspecify.annotations.NullMarked;
