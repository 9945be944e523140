package io.ductor.sample.modulith.inventory;

import java.util.List;
import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /stock/{sku}} lists a product's stock movements. */
@RestController
class InventoryController {

	private final Inventory inventory;

	InventoryController(Inventory inventory) {
		this.inventory = inventory;
	}

	@GetMapping("/stock/{sku}")
	List<Map<String, Object>> movements(@PathVariable String sku) {
		return this.inventory.movements(sku);
	}

}
