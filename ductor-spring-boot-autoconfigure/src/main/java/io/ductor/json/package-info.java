/**
 * How Ductor reports values it cannot write or read as JSON.
 */
@NullMarked
package io.ductor.json;

import org.jspecify.annotations.NullMarked;
