/**
 * Auto-configuration of the inbox.
 */
@NullMarked
package io.ductor.messaging.autoconfigure;

import org.jspecify.annotations.NullMarked;
