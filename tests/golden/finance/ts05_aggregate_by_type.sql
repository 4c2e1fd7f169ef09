-- ledgerflow 0.1.0: project ts05_aggregate_by_type (id 0b000000-0000-4000-8000-000000000005, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_gl <- dataset gl (period, latest active version)
--   ds_accounts <- dataset accounts (period, latest active version)

-- lf_stage_1: operations input, 1-2; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_gl`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_join_acct` AS (
  SELECT
    `code` AS `acct__code`,
    `name` AS `acct__name`,
    `type` AS `acct__type`,
    `category` AS `acct__category`,
    `is_active` AS `acct__is_active`,
    `_period` AS `acct___period`,
    COUNT(*) OVER (PARTITION BY `code`) AS `acct___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `code`,
      `name`,
      `type`,
      `category`,
      `is_active`,
      `_period`
    FROM `ds_accounts`
    WHERE
      NOT `_deleted`
      AND (
        `_period` = :period_identifier
        OR (
          `_period` >= CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN DATE_FORMAT(:period_start, 'yyyy-MM')
            ELSE CONCAT(:period_identifier, '-')
          END
          AND `_period` < CASE
            WHEN :period_identifier LIKE '%Q%'
            THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
            ELSE CONCAT(:period_identifier, '.')
          END
        )
      )
      AND (
        `_period` IS NOT DISTINCT FROM :period_identifier
        OR (
          LENGTH(`_period`) IN (4, 7, 10)
          AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
          AND (
            SUBSTRING(`_period`, 6, 1) = 'Q'
            OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
          )
        )
      )
  ) AS `join_rows`
), `op_001_update` AS (
  SELECT
    `transactions`.`journal_id`,
    `transactions`.`line_number`,
    `transactions`.`posting_date`,
    `transactions`.`account_code`,
    `transactions`.`cost_center_code`,
    `transactions`.`currency`,
    `transactions`.`amount_local`,
    `transactions`.`amount_reporting`,
    `transactions`.`description`,
    `transactions`.`source_system`,
    `transactions`.`_row_id`,
    `transactions`.`_deleted`,
    CASE
      WHEN NOT `transactions`.`_deleted`
      THEN :run_started_at
      ELSE `transactions`.`_updated_at`
    END AS `_updated_at`,
    `transactions`.`_period`,
    `transactions`.`_labels`,
    `transactions`.`_source_dataset`,
    `transactions`.`_operation_seq`,
    CASE WHEN NOT `transactions`.`_deleted` THEN `acct`.`acct__type` END AS `account_type`,
    `transactions`.`_lf_origin`,
    `transactions`.`_lf_deleted_by`
  FROM `input` AS `transactions`
  LEFT JOIN `op_001_join_acct` AS `acct`
    ON `transactions`.`account_code` = `acct`.`acct__code`
    AND NOT `transactions`.`_deleted`
  WHERE
    (
      COALESCE(`acct`.`acct___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'acct\' of operation 1 matched ',
          CAST(`acct`.`acct___lf_matches` AS STRING),
          ' rows of dataset \'accounts\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`transactions`.`account_code` AS STRING))
        )
      )
    )
), `op_002_summary` AS (
  SELECT
    `account_type`,
    SUM(`amount_local`) AS `total_amount`,
    COUNT(`journal_id`) AS `line_count`
  FROM `op_001_update`
  WHERE
    NOT `_deleted`
  GROUP BY
    `account_type`
), `op_002_aggregate` AS (
  SELECT
    `journal_id`,
    `line_number`,
    `posting_date`,
    `account_code`,
    `cost_center_code`,
    `currency`,
    `amount_local`,
    `amount_reporting`,
    `description`,
    `source_system`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `account_type`,
    CAST(NULL AS DECIMAL(28, 2)) AS `total_amount`,
    CAST(NULL AS BIGINT) AS `line_count`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `op_001_update`
  UNION ALL
  SELECT
    CAST(NULL AS STRING) AS `journal_id`,
    CAST(NULL AS INT) AS `line_number`,
    CAST(NULL AS DATE) AS `posting_date`,
    CAST(NULL AS STRING) AS `account_code`,
    CAST(NULL AS STRING) AS `cost_center_code`,
    CAST(NULL AS STRING) AS `currency`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_local`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount_reporting`,
    CAST(NULL AS STRING) AS `description`,
    CAST(NULL AS STRING) AS `source_system`,
    CONCAT(
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        1,
        8
      ),
      '-',
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        9,
        4
      ),
      '-7',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 1, 3),
      '-8',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 4, 3),
      '-',
      SUBSTRING(SHA2(TO_JSON(STRUCT(2 AS k0, `account_type` AS k1)), 256), 7, 12)
    ) AS `_row_id`,
    FALSE AS `_deleted`,
    :run_started_at AS `_updated_at`,
    :period_identifier AS `_period`,
    '' AS `_labels`,
    '0a000000-0000-4000-8000-000000000001' AS `_source_dataset`,
    2 AS `_operation_seq`,
    CAST(`account_type` AS STRING) AS `account_type`,
    `total_amount`,
    `line_count`,
    2 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `op_002_summary`
)
SELECT
  *
FROM `op_002_aggregate`;

-- output_003: operation 3 'Write lines and totals' writes table ts05_by_account_type
SELECT
  `journal_id`,
  `line_number`,
  `posting_date`,
  `account_code`,
  `cost_center_code`,
  `currency`,
  `amount_local`,
  `amount_reporting`,
  `description`,
  `source_system`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`,
  `account_type`,
  `total_amount`,
  `line_count`
FROM `lf_stage_1`
WHERE
  NOT `_deleted`;

