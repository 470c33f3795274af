#!/usr/bin/perl
# The crash soak's checks of tide's state store against the provider's own
# record of its instances (tests/integration/soak.sh, k8s/soak.sh).
#
#   soak_check.pl --db STATE.DB (--local-provider DIR | --intervals FILE)
#                 --prices NODE=PRICE,... --mode kill|post|final
#                 [--since UNIX] [--seen FILE] [--tol SECONDS]
#
# The provider's record: for the local provider, each instance's id
# (local-<node>-<created unix seconds>-<pid>), its live record under
# instances/ and its line in terminated.log (when it ended); otherwise a file
# of lines "ID NODE START END" (END "-" while live). Prices are per hour, by
# node (the pool the node belongs to): NODE=PRICE, or PREFIX*=PRICE for every
# node whose name starts with PREFIX.
#
# Prints one line per violation, "VIOLATION <invariant> <key> <detail>", the
# key naming the fact (an instance, a node) so the caller counts each once,
# and one line "TOTALS ...". Invariants:
#   bought_twice  two instances of one node alive at once, at the provider
#                 or in the store
#   leaked        (post, final) an instance the provider has and the store
#                 does not, or the reverse; a create or delete still pending
#                 from before the restart (--since); (final) anything live
#   ledger        (post, final) the store's ledger against the provider's
#                 lifetimes: every ended instance has one entry, start and
#                 end within --tol seconds, the cost its price times its
#                 lifetime, and the totals equal
# In mode kill (tide just SIGKILLed) only bought_twice is checked.
use strict;
use warnings;
use Getopt::Long;
use Time::Local qw(timegm);

my ($db, $local, $intervals, $prices_arg, $mode, $since, $seen_file) = ('', '', '', '', 'post', 0, '');
my $tol = 2;
GetOptions('db=s' => \$db, 'local-provider=s' => \$local, 'intervals=s' => \$intervals,
           'prices=s' => \$prices_arg, 'mode=s' => \$mode, 'since=i' => \$since, 'seen=s' => \$seen_file,
           'tol=f' => \$tol) or die "usage: see the head of $0\n";
die "soak_check: --db and --prices are required\n" unless $db && $prices_arg;
die "soak_check: --mode is kill, post or final\n" unless $mode =~ /^(kill|post|final)$/;
my %price = map { split /=/, $_, 2 } split /,/, $prices_arg;
# A node's price: its own entry, else the longest NAME* entry it starts with.
sub price_of {
  my ($node) = @_;
  return $price{$node} if exists $price{$node};
  my ($best, $len) = (undef, -1);
  for my $k (keys %price) {
    next unless $k =~ /^(.*)\*$/;
    my $p = $1;
    ($best, $len) = ($price{$k}, length $p) if substr($node, 0, length $p) eq $p && length $p > $len;
  }
  return $best;
}

my @out;
sub violation { my ($inv, $key, $detail) = @_; push @out, "VIOLATION $inv $key $detail"; }

# ---- the provider's record: id -> {node, start, end (undef while live)} ----
my %prov;
if ($local) {
  for my $f (glob("$local/instances/*.json")) {
    (my $id = $f) =~ s{.*/}{}; $id =~ s/\.json$//;
    next unless $id =~ /^local-(.+)-(\d+)-(\d+)$/;
    $prov{$id} = {node => $1, start => $2, end => undef, live => 1};
  }
  if (open my $t, '<', "$local/terminated.log") {
    while (<$t>) {
      next unless /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z (local-(\S+)-(\d+)-\d+) (.*)$/;
      my ($id, $node, $start, $why) = ($7, $8, $9, $10);
      my $end = timegm($6, $5, $4, $3, $2 - 1, $1);
      next if exists $prov{$id} && defined $prov{$id}{end};  # the first line stands
      $prov{$id} = {node => $node, start => $start, end => $end, live => 0, why => $why};
    }
  }
  # A live record and an end line both: the record outlived its end (the
  # provider forgets by removing the record first), or a crash in between.
  # Either way the end is known.
} elsif ($intervals) {
  open my $f, '<', $intervals or die "soak_check: $intervals: $!\n";
  while (<$f>) {
    my ($id, $node, $start, $end) = split;
    next unless defined $end;
    $prov{$id} = {node => $node, start => $start, end => $end eq '-' ? undef : $end, live => $end eq '-', why => 'deleted'};
  }
} else {
  die "soak_check: --local-provider or --intervals is required\n";
}

# Instances seen live before must still be somewhere in the record.
if ($seen_file) {
  my %seen;
  if (open my $s, '<', $seen_file) {
    while (<$s>) { my ($id, $node, $start) = split; $seen{$id} = [$node, $start] if defined $start; }
  }
  for my $id (sort keys %seen) {
    violation('ledger', "vanished:$id", "instance $id (node $seen{$id}[0]) was live at the provider earlier and "
              . "is now neither live nor recorded as ended") unless exists $prov{$id};
  }
  open my $s, '>>', $seen_file or die "soak_check: $seen_file: $!\n";
  for my $id (sort keys %prov) {
    print $s "$id $prov{$id}{node} $prov{$id}{start}\n" if !defined $prov{$id}{end} && !exists $seen{$id};
  }
}

# ---- the store ----
sub rows {
  my ($sql) = @_;
  my @r = map { chomp; [split /\|/, $_, -1] } `sqlite3 -batch -separator '|' "$db" "$sql"`;
  die "soak_check: sqlite3 failed on $db: $sql\n" if $?;
  return @r;
}
my %st;    # id -> {node, pool, created, deleted, state, key}
for my $r (rows("select id, node, pool, created, coalesce(deleted, ''), state, idempotency_key from instances")) {
  my ($id, $node, $pool, $created, $deleted, $state, $key) = @$r;
  $st{$id} = {node => $node, pool => $pool, created => $created, deleted => $deleted eq '' ? undef : $deleted,
              state => $state, key => $key};
}
my %led;   # id -> {price, start, end, cost}
for my $r (rows("select instance_id, price_per_hour, start_at, end_at, cost from ledger")) {
  $led{$r->[0]} = {price => $r->[1], start => $r->[2], end => $r->[3], cost => $r->[4]};
}
my @pending = rows("select key, kind, node, created from actions where state = 'pending'");

# ---- bought twice: intervals of one node overlap ----
sub overlaps {
  my ($what, $iv) = @_;  # iv: node -> [[id, start, end|undef], ...]
  for my $node (sort keys %$iv) {
    my @l = sort { $a->[1] <=> $b->[1] || $a->[0] cmp $b->[0] } @{$iv->{$node}};
    for my $i (1 .. $#l) {
      my ($p, $c) = ($l[$i - 1], $l[$i]);
      # Seconds are whole: an end and a start in the same second touch.
      if (!defined $p->[2] || $c->[1] < $p->[2]) {
        violation('bought_twice', "$what:$p->[0]+$c->[0]",
                  "$what: node $node has instance $c->[0] (from $c->[1]) while $p->[0] (from $p->[1], "
                  . (defined $p->[2] ? "to $p->[2]" : "still live") . ") is alive");
      }
    }
  }
}
my (%piv, %siv);
push @{$piv{$prov{$_}{node}}}, [$_, $prov{$_}{start}, $prov{$_}{end}] for keys %prov;
push @{$siv{$st{$_}{node}}}, [$_, $st{$_}{created}, $st{$_}{deleted}] for keys %st;
overlaps('provider', \%piv);
overlaps('store', \%siv);
my (%plive, %slive);
for (keys %prov) { $plive{$prov{$_}{node}}++ unless defined $prov{$_}{end} }
for (keys %st) { $slive{$st{$_}{node}}++ unless defined $st{$_}{deleted} }

if ($mode ne 'kill') {
  # ---- leaked: provider and store disagree on what is live ----
  for my $id (sort keys %prov) {
    next if defined $prov{$id}{end};
    if (!exists $st{$id}) {
      violation('leaked', "unknown:$id", "the provider has instance $id (node $prov{$id}{node}); the store never had it");
    } elsif (defined $st{$id}{deleted}) {
      violation('leaked', "deleted:$id", "the provider still has instance $id (node $prov{$id}{node}); the store "
                . "closed it at $st{$id}{deleted} as $st{$id}{state}");
    }
  }
  for my $id (sort keys %st) {
    next if defined $st{$id}{deleted};
    next if exists $prov{$id} && !defined $prov{$id}{end};
    violation('leaked', "ghost:$id", "the store has instance $id (node $st{$id}{node}) live; the provider "
              . (exists $prov{$id} ? "ended it at $prov{$id}{end}" : "never had it"));
  }
  for my $p (@pending) {
    my ($key, $kind, $node, $created) = @$p;
    next unless $kind eq 'create' || $kind eq 'delete';
    next unless $mode eq 'final' || $created < $since;
    violation('leaked', "pending:$key", "$kind of node $node (key $key, from $created) is still pending "
              . ($mode eq 'final' ? "at the end" : "after the restart at $since"));
  }
  if ($mode eq 'final') {
    for my $id (sort keys %prov) {
      violation('leaked', "left:$id", "instance $id (node $prov{$id}{node}) is still live at the provider at the end")
        unless defined $prov{$id}{end};
    }
    for my $id (sort keys %st) {
      violation('leaked', "left-store:$id", "the store has instance $id (node $st{$id}{node}) live at the end")
        unless defined $st{$id}{deleted};
    }
  }

  # ---- ledger: the store's entries against the provider's lifetimes ----
  my ($lcost, $pcost, $n) = (0, 0, 0);
  for my $id (sort keys %prov) {
    my $p = $prov{$id};
    next unless defined $p->{end};
    my $pr = price_of($p->{node});
    if (!defined $pr) { violation('ledger', "price:$id", "no price for node $p->{node}"); next; }
    $n++;
    $pcost += $pr * ($p->{end} - $p->{start}) / 3600;
    my $l = $led{$id};
    if (!$l) {
      violation('ledger', "missing:$id", "instance $id (node $p->{node}) ended at the provider at $p->{end} "
                . "($p->{why}); no ledger entry");
      next;
    }
    my ($ds, $de) = ($l->{start} - $p->{start}, $l->{end} - $p->{end});
    if (abs($ds) > $tol || abs($de) > $tol) {
      violation('ledger', "times:$id", "instance $id (node $p->{node}): ledger $l->{start}..$l->{end}, provider "
                . "$p->{start}..$p->{end} ($p->{why}): start off by $ds s, end by $de s");
    }
    if (abs($l->{price} - $pr) > 1e-9) {
      violation('ledger', "rate:$id", "instance $id (node $p->{node}) billed at $l->{price}/h, its pool costs $pr/h");
    }
    my $want = $l->{price} * ($l->{end} - $l->{start}) / 3600;
    if (abs($l->{cost} - $want) > 1e-6) {
      violation('ledger', "cost:$id", "instance $id: ledger cost $l->{cost}, its interval at its price is $want");
    }
  }
  for my $id (sort keys %led) {
    $lcost += $led{$id}{cost};
    next if exists $prov{$id} && defined $prov{$id}{end};
    violation('ledger', "extra:$id", "ledger entry for instance $id, which the provider "
              . (exists $prov{$id} ? "still has live" : "has no record of"));
  }
  for my $id (sort keys %st) {
    my $s = $st{$id};
    next unless defined $s->{deleted};
    my $l = $led{$id};
    if (!$l || $l->{start} != $s->{created} || $l->{end} != $s->{deleted}) {
      violation('ledger', "closed:$id", "instance $id is closed in the store ($s->{created}..$s->{deleted}) "
                . ($l ? "but its ledger entry says $l->{start}..$l->{end}" : "without a ledger entry"));
    }
  }
  # The totals: the whole bill within the tolerance per instance.
  my $maxp = 0;
  for (values %price) { $maxp = $_ if $_ > $maxp }
  if (abs($lcost - $pcost) > $n * 2 * $tol * $maxp / 3600 + 1e-6) {
    violation('ledger', "total", sprintf("ledger total %.6f, provider lifetimes at their prices %.6f", $lcost, $pcost));
  }
  push @out, sprintf("TOTALS instances=%d ended=%d ledger_entries=%d ledger_cost=%.4f provider_cost=%.4f",
                     scalar(keys %prov), $n, scalar(keys %led), $lcost, $pcost);
} else {
  push @out, sprintf("TOTALS instances=%d live_at_provider=%d live_in_store=%d", scalar(keys %prov),
                     scalar(grep { !defined $prov{$_}{end} } keys %prov), scalar(grep { !defined $st{$_}{deleted} } keys %st));
}
print "$_\n" for @out;
