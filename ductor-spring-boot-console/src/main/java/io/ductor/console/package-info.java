/**
 * The optional operator console, served by the application.
 */
@NullMarked
package io.ductor.console;

import org.jspecify.annotations.NullMarked;
