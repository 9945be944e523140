/**
 * The sample shop: mail.
 */
@NullMarked
package io.ductor.sample.mail;

import org.jspecify.annotations.NullMarked;
