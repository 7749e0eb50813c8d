package shop;

/** Prices: see Basket for the `//=` counts. */
public final class Pricing {
    private Pricing() {} //= never

    /**
     * 10% off from 10000 up, 5% from 5000 up. PricingTest: 20000, 5000, 4999; CheckoutTest
     * (through discounted): 11000, 1200.
     */
    public static int discountPercent(long total) {
        if (total >= 10000) { //= PricingTest=3 CheckoutTest=2
            return 10; //= PricingTest=1 CheckoutTest=1
        }
        if (total >= 5000) { //= PricingTest=2 CheckoutTest=1
            return 5; //= PricingTest=1
        }
        return 0; //= PricingTest=1 CheckoutTest=1
    }

    /** CheckoutTest: 11000, 1200. */
    public static long discounted(long total) {
        return total - total * discountPercent(total) / 100; //= CheckoutTest=2
    }

    /**
     * Compound growth, rounding down each year. PricingTest: (1000, 10, 3), (500, 10, 0). A
     * `for` header counts its initialisation and each increment.
     */
    public static long grow(long amount, int percent, int years) {
        for (int y = 0; y < years; y++) { //= PricingTest=5
            amount += amount * percent / 100; //= PricingTest=3
        }
        return amount; //= PricingTest=2
    }
}
