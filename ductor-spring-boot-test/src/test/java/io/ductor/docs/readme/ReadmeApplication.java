package io.ductor.docs.readme;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

import io.ductor.docs.shop.Shop;

/**
 * The application {@link OrderFlowTest} of {@code README.md} finds: the shop of
 * {@code docs/testing.md} in a context of its own, so that the two pages' tests, which
 * place the same orders, do not share a database.
 */
@SpringBootApplication
@Import(Shop.class)
public class ReadmeApplication {

}
