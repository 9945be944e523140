/**
 * The documentation's code blocks and property tables, checked against the code.
 */
@NullMarked
package io.ductor.test.docs;

import org.jspecify.annotations.NullMarked;
