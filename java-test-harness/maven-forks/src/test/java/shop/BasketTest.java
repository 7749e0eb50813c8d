package shop;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** Basket alone (the counts: Basket's `//=` comments). */
public class BasketTest {
    @Test
    public void addsPricesTimesQuantities() {
        Basket b = new Basket();
        b.add(250, 2);
        b.add(100, 1);
        assertEquals(600, b.total());
        assertEquals(3, b.items());
    }

    @Test(expected = IllegalArgumentException.class)
    public void refusesAQuantityOfZero() {
        new Basket().add(5, 0);
    }

    @Test
    public void startsEmpty() {
        assertEquals(0, new Basket().total());
    }
}
