/**
 * Headless Chromium for the page tests.
 */
@NullMarked
package io.ductor.test.browser;

import org.jspecify.annotations.NullMarked;
