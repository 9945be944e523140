/**
 * A Spring Modulith application whose listeners Ductor runs, for the Modulith crash.
 */
@NullMarked
package io.ductor.reliability.modulith;

import org.jspecify.annotations.NullMarked;
