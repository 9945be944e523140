package io.ductor.docs.testing;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;

import io.ductor.docs.shop.Shop;

/** The application {@link OrderFlowTest} of {@code docs/testing.md} finds. */
@SpringBootApplication
@Import(Shop.class)
public class TestingPageApplication {

}
