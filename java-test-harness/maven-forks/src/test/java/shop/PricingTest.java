package shop;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** Pricing alone: never loads Basket. */
public class PricingTest {
    @Test
    public void discountTiers() {
        assertEquals(10, Pricing.discountPercent(20000));
        assertEquals(5, Pricing.discountPercent(5000));
        assertEquals(0, Pricing.discountPercent(4999));
    }

    @Test
    public void growth() {
        assertEquals(1331, Pricing.grow(1000, 10, 3));
        assertEquals(500, Pricing.grow(500, 10, 0));
    }
}
