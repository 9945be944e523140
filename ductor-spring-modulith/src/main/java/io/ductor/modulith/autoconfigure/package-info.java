/**
 * Auto-configuration of Ductor for Spring Modulith.
 */
@NullMarked
package io.ductor.modulith.autoconfigure;

import org.jspecify.annotations.NullMarked;
