/**
 * Spring Modulith on Ductor: the event publications of transactional listeners
 * ({@code @ApplicationModuleListener}, {@code @TransactionalEventListener} after commit)
 * are recorded as effect intents of
 * {@link io.ductor.modulith.ModulithPublications#EFFECT_NAME} in the publishing
 * transaction, and Ductor's drainer runs the listeners.
 */
@NullMarked
package io.ductor.modulith;

import org.jspecify.annotations.NullMarked;
