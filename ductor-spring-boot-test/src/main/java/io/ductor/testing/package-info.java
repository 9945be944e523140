/**
 * {@code @AutoConfigureDuctorTester} and {@link io.ductor.testing.DuctorTester}:
 * applications' tests of their flows.
 */
@NullMarked
package io.ductor.testing;

import org.jspecify.annotations.NullMarked;
