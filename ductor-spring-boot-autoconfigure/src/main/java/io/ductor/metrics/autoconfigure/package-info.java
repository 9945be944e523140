/**
 * Auto-configuration of Ductor's Micrometer meters.
 */
@NullMarked
package io.ductor.metrics.autoconfigure;

import org.jspecify.annotations.NullMarked;
