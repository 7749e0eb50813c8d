package shop;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** Basket and Pricing together. */
public class CheckoutTest {
    @Test
    public void largeBasketGetsTenPercent() {
        Basket b = new Basket();
        b.add(3000, 2);
        b.add(1000, 5);
        assertEquals(7, b.items());
        assertEquals(9900, Pricing.discounted(b.total()));
    }

    @Test
    public void smallBasketPaysFullPrice() {
        Basket b = new Basket();
        b.add(1200, 1);
        assertEquals(1200, Pricing.discounted(b.total()));
    }
}
