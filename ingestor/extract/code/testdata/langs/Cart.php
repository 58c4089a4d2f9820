<?php

namespace App;

use Countable;

/**
 * A cart.
 */
final class Cart implements Countable
{
    private array $items = [];

    public function add(string $sku): void
    {
        $this->items[] = $sku;
    }

    #[\ReturnTypeWillChange]
    public function count(): int
    {
        $doc = <<<EOT
function fake() {}
EOT;
        return count($this->items);
    }
}

function helper(): string
{
    return 'x';
}
